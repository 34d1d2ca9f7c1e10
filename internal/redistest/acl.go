package redistest

import (
	"fmt"
	"strings"
	"testing"
)

// AdminUser and AdminPassword are the user the harness speaks as on the
// nodes of a topology started with the default user off (NodeOptions,
// ClusterOptions and SentinelOptions: DefaultUserOff). It may do
// anything, so that the harness, replication, redis-cli and the sentinels
// work while a test's own users hold exactly the rules under test.
const (
	AdminUser     = "redistest-admin"
	AdminPassword = "redistest-admin-password"
)

// aclArgs are redis-server's settings for a node whose default user is
// off: AdminUser with every permission, and AdminUser's credentials for
// replicating from a master that has the same settings.
func aclArgs() []string {
	return []string{
		"--user", "default", "off",
		"--user", AdminUser, "on", ">" + AdminPassword, "~*", "&*", "+@all",
		"--masteruser", AdminUser, "--masterauth", AdminPassword,
	}
}

// NodeOptions tunes StartNodeWith.
type NodeOptions struct {
	// TLS, when set, makes the node TLS-only with these files, as
	// StartTLSNode does.
	TLS *TLSFiles
	// DefaultUserOff turns the default user off: a client must
	// authenticate as a user the test adds (ACL SETUSER through Do, which
	// speaks as AdminUser).
	DefaultUserOff bool
}

// StartNodeWith is StartNode (or StartTLSNode) with options.
func StartNodeWith(t testing.TB, name string, opts NodeOptions, args ...string) *Node {
	t.Helper()
	Require(t)
	if opts.DefaultUserOff {
		args = append(aclArgs(), args...)
	}
	if opts.TLS != nil {
		return startTLSNode(t, name, opts.TLS, opts.DefaultUserOff, args...)
	}
	return startNodeAs(t, name, access{admin: opts.DefaultUserOff}, func(port int, dir string) []string {
		return append(nodeArgs(port, dir), args...)
	})
}

// SetUser runs ACL SETUSER name on rule... (each element one ACL rule,
// as strings.Fields splits a rule) on every node.
func SetUser(nodes []*Node, name string, rule ...string) error {
	for _, n := range nodes {
		if _, err := n.DoString(append([]string{"ACL", "SETUSER", name}, rule...)...); err != nil {
			return fmt.Errorf("%s: ACL SETUSER %s: %w", n.Name, name, err)
		}
	}
	return nil
}

// ACLLog returns the node's ACL LOG: one line per entry, naming the user,
// the reason (command, key, channel, auth) and the object refused, with
// how many times it was.
func (n *Node) ACLLog() ([]string, error) {
	v, err := n.Do("ACL", "LOG")
	if err != nil {
		return nil, err
	}
	if re, ok := v.(ReplyError); ok {
		return nil, fmt.Errorf("%s: ACL LOG: %w", n.Name, re)
	}
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		entry, _ := e.([]any)
		m := map[string]string{}
		for i := 0; i+1 < len(entry); i += 2 {
			k, _ := entry[i].(string)
			switch val := entry[i+1].(type) {
			case string:
				m[k] = val
			case int64:
				m[k] = fmt.Sprint(val)
			}
		}
		out = append(out, fmt.Sprintf("%s: user %s refused %s %q (%s times, context %s)",
			n.Name, m["username"], m["reason"], m["object"], m["count"], m["context"]))
	}
	return out, nil
}

// ACLLogs returns the ACL LOG entries of every node (see Node.ACLLog),
// joined: "" when no node refused anything.
func ACLLogs(nodes []*Node) (string, error) {
	var all []string
	for _, n := range nodes {
		lines, err := n.ACLLog()
		if err != nil {
			return "", err
		}
		all = append(all, lines...)
	}
	return strings.Join(all, "\n"), nil
}
