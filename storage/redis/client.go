package redisstore

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// clientInfo is what the store knows of its client's configuration, for
// the fixes it logs: whether it speaks TLS, the addresses it dials first
// (a node, the Cluster's seeds or the sentinels), whether it is a
// Sentinel client and, with WithClientConfig, the master's name and the
// password file.
type clientInfo struct {
	tls          bool
	addrs        []string
	failover     bool
	masterName   string
	passwordFile string
}

// failoverAddr is the Addr of the options of a client that
// redis.NewFailoverClient built.
const failoverAddr = "FailoverClient"

// infoOf returns what the store can learn of client's configuration from
// the client alone: a Sentinel client does not tell its master's name,
// nor any client a password file.
func infoOf(client redis.UniversalClient) clientInfo {
	switch c := client.(type) {
	case *redis.ClusterClient:
		o := c.Options()
		return clientInfo{tls: o.TLSConfig != nil, addrs: o.Addrs}
	case *redis.Client:
		o := c.Options()
		switch {
		case o.Addr == failoverAddr:
			return clientInfo{tls: o.TLSConfig != nil, failover: true}
		case o.Network == "unix":
			return clientInfo{tls: o.TLSConfig != nil}
		}
		return clientInfo{tls: o.TLSConfig != nil, addrs: []string{o.Addr}}
	}
	return clientInfo{}
}

// info returns what c says of the client it builds.
func (c *Config) info() clientInfo {
	switch c.Topology {
	case Cluster:
		return clientInfo{tls: c.Cluster.TLSConfig != nil, addrs: c.Cluster.Addrs, passwordFile: c.passwordFile}
	case Failover:
		return clientInfo{tls: c.Failover.TLSConfig != nil, addrs: c.Failover.SentinelAddrs, failover: true,
			masterName: c.Failover.MasterName, passwordFile: c.passwordFile}
	}
	info := clientInfo{tls: c.Single.TLSConfig != nil, passwordFile: c.passwordFile}
	if c.Single.Network != "unix" {
		info.addrs = []string{c.Single.Addr}
	}
	return info
}

// fits reports, as an error, whether client is of the kind c builds.
func (c *Config) fits(client redis.UniversalClient) error {
	var kind Topology
	switch v := client.(type) {
	case *redis.ClusterClient:
		kind = Cluster
	case *redis.Client:
		kind = Single
		if v.Options().Addr == failoverAddr {
			kind = Failover
		}
	default:
		return fmt.Errorf("the client is a %T, which Config.NewClient does not build", client)
	}
	if kind != c.Topology {
		return fmt.Errorf("the Config names a %s but the client is for a %s; give New the client this Config built (Config.NewClient)", c.Topology, kind)
	}
	return nil
}
