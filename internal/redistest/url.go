package redistest

import "strings"

// The Redis URLs of the rigs, in the forms of the store's REDIS_URL and
// the suite's -consistency-redis (internal/redisurl's grammar), so that a
// test names a topology by its rig rather than writing the form again.
// They carry no credentials: a test whose nodes want a user adds it
// (redis://user:password@… or, for the master behind sentinels,
// &username=…&password=…).

// URL is the set's URL in the Sentinel form:
// redis://sentinel-0?master_name=NAME&addr=sentinel-1&addr=sentinel-2,
// rediss:// when the set speaks TLS.
func (s *SentinelSet) URL() string {
	params := append([]string{"master_name=" + s.MasterName}, addrParams(s.Sentinels[1:])...)
	return scheme(s.Sentinels[0]) + "://" + s.Sentinels[0].Addr() + "?" + strings.Join(params, "&")
}

// URL is the Cluster's URL with every node as a seed (see ClusterURL).
func (c *Cluster) URL() string { return ClusterURL(c.Nodes...) }

// ClusterURL is the URL of a Cluster seeded with seeds, in their order:
// redis://seed-0?addr=seed-1&addr=…, or redis://seed-0?cluster=true with
// one seed (without it, one address names one node); rediss:// when the
// nodes speak TLS.
func ClusterURL(seeds ...*Node) string {
	params := addrParams(seeds[1:])
	if len(params) == 0 {
		params = []string{"cluster=true"}
	}
	return scheme(seeds[0]) + "://" + seeds[0].Addr() + "?" + strings.Join(params, "&")
}

func scheme(n *Node) string {
	if n.access.tls != nil {
		return "rediss"
	}
	return "redis"
}

// addrParams are an addr= parameter for each node.
func addrParams(nodes []*Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = "addr=" + n.Addr()
	}
	return out
}
