package redisstore

import (
	"strings"
)

// storeCommands are the Redis commands the store sends, lower case, as
// ACL rules name them: every one of them must be permitted on the store's
// keys ({prefix}:*) for it to serve, and Ready proves that they are.
// Clear, which tests and demos use, also needs scan.
var storeCommands = []string{
	"ping", "info",
	"watch", "unwatch", "multi", "exec",
	"exists", "hget", "hset", "hdel", "hlen", "hscan",
	"mset", "del", "unlink", "expire", "persist", "rename",
	"xadd", "xrange", "xrevrange",
	"wait",
}

// clientCommands are the commands go-redis's ClusterClient sends on its
// own, on no key: CLUSTER SLOTS for the slot map, and COMMAND, whose
// reply it caches to route commands. Without +command it asks again for
// every command it routes, and each refusal is an entry of ACL LOG and a
// line of go-redis's log. A single node and Sentinel need neither, and
// are not hurt by them: COMMAND and CLUSTER SLOTS only describe the
// server.
var clientCommands = []string{"cluster|slots", "command"}

// ACLRule returns the least Redis ACL rule that lets a user serve a store
// of the given key prefix, on one node, a Cluster or through Sentinel
// alike: its keys only (~{prefix}:*), no Pub/Sub channel, the commands
// the store sends, and those go-redis's Cluster client sends on its own
// (CLUSTER SLOTS, COMMAND). For example, for the default prefix:
//
//	ACL SETUSER app on >PASSWORD resetkeys resetchannels -@all ~{inventory}:* +ping +info +watch …
//
// with ACLRule("inventory") after ">PASSWORD" (an ACL file line takes the
// same rule after "user app on >PASSWORD"). Authentication itself (AUTH,
// HELLO) needs no permission, and the clients ParseURL configures send
// no CLIENT SETINFO (see ApplyTimeouts). In the Sentinel form the rule is
// the master's (and its replicas', which may be promoted); the sentinels
// have users of their own.
func ACLRule(prefix string) string {
	var b strings.Builder
	b.WriteString("resetkeys resetchannels -@all ~{" + prefix + "}:*")
	for _, c := range storeCommands {
		b.WriteString(" +" + c)
	}
	for _, c := range clientCommands {
		b.WriteString(" +" + c)
	}
	return b.String()
}
