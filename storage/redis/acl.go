package redisstore

import "strings"

// Commands are the Redis commands the store sends, lower case, as ACL
// rules name them: every one of them must be permitted on the store's
// keys ({prefix}:*) for it to serve, and Ready proves that they are.
// Clear, which tests and demos use, also needs scan (and unlink, listed).
var Commands = []string{
	"ping", "info",
	"watch", "unwatch", "multi", "exec",
	"exists", "hget", "hset", "hdel", "hlen", "hscan",
	"mset", "del", "unlink", "expire", "persist", "rename",
	"xadd", "xrange", "xrevrange",
	"wait",
}

// ACLRule returns the least Redis ACL rule that lets a user serve a store
// of the given key prefix: its keys only (~{prefix}:*), no Pub/Sub
// channel, and the commands in Commands only. For example, for the
// default prefix:
//
//	ACL SETUSER app on >PASSWORD resetkeys resetchannels -@all ~{inventory}:* +ping +info +watch …
//
// with ACLRule("inventory") after ">PASSWORD" (an ACL file line takes the
// same rule after "user app on >PASSWORD"). Authentication itself (AUTH,
// HELLO) needs no permission.
func ACLRule(prefix string) string {
	var b strings.Builder
	b.WriteString("resetkeys resetchannels -@all ~{" + prefix + "}:*")
	for _, c := range Commands {
		b.WriteString(" +" + c)
	}
	return b.String()
}
