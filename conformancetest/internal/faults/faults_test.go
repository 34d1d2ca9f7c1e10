package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/redisproc"
	"github.com/petinventory/petinventory/conformancetest/internal/redisurl"
	"github.com/petinventory/petinventory/conformancetest/internal/resp"
)

func TestKeySlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31C3 {
		t.Errorf("crc16(123456789) = %#x, want 0x31c3 (CRC-16/XMODEM's check value)", got)
	}
	// Values Redis answers to CLUSTER KEYSLOT; an empty hash tag ("{}foo")
	// hashes the whole key, not "foo".
	for key, want := range map[string]int{"foo": 12182, "bar": 5061, "{foo}:x": 12182, "a{foo}b": 12182, "{}foo": 9500} {
		if got := KeySlot(key); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if StoreSlot("inventory") != KeySlot("inventory") {
		t.Error("the store's slot is that of its prefix, its hash tag")
	}
}

// TestKeySlotAgainstRedis compares KeySlot with what Redis answers to
// CLUSTER KEYSLOT (a node in cluster mode answers it without slots).
func TestKeySlotAgainstRedis(t *testing.T) {
	addr := redisproc.Start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	c, err := resp.Dial(context.Background(), "tcp", addr, nil, "", "", Timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, key := range []string{"inventory", "{inventory}:items", "{shop-1}:probe:x", "a{}b", "x{{y}}", "pets"} {
		v, err := c.Do("CLUSTER", "KEYSLOT", key)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := v.(int64); KeySlot(key) != int(want) {
			t.Errorf("KeySlot(%q) = %d, Redis says %d", key, KeySlot(key), want)
		}
	}
}

func TestConnAgainstRedis(t *testing.T) {
	addr := redisproc.Start(t, "--requirepass", "s3cret-pw")
	ctx := context.Background()
	if _, err := resp.Dial(ctx, "tcp", addr, nil, "", "wrong-pw", Timeout); err == nil || strings.Contains(err.Error(), "wrong-pw") {
		t.Fatalf("a wrong password: want an error that does not quote it, got %v", err)
	}
	c, err := resp.Dial(ctx, "tcp", addr, nil, "", "s3cret-pw", Timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", "k", "v\r\nx"}, "OK"},
		{[]string{"GET", "k"}, "v\r\nx"},
		{[]string{"GET", "missing"}, "<nil>"},
		{[]string{"RPUSH", "l", "a", "b"}, "2"},
		{[]string{"LRANGE", "l", "0", "-1"}, "[a b]"},
		{[]string{"INCR", "k"}, "error ERR value is not an integer or out of range"},
	} {
		v, err := c.Do(step.args...)
		got := fmt.Sprint(v)
		if err != nil {
			got = "error " + err.Error()
		}
		if got != step.want {
			t.Errorf("%v: %q, want %q", step.args, got, step.want)
		}
	}
}

func TestTargetAgainstRedis(t *testing.T) {
	addr := redisproc.Start(t, "--user", "default", "off", "--user", "faults", "on", ">fault-pw", "-@all", "+ping", "+client|pause", "+client|kill")
	ctx := context.Background()
	tg, err := ParseURL("redis://faults:fault-pw@"+addr+"/0", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Check(ctx, Needs{Pause: true, KillClients: true}, "inventory"); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := tg.Check(ctx, Needs{Failover: true}, "inventory"); err == nil || !strings.Contains(err.Error(), "needs Sentinel") {
		t.Errorf("a failover of one node: want an error that says it needs Sentinel or a Cluster, got %v", err)
	}
	// Another client, which the kill closes.
	other, err := resp.Dial(ctx, "tcp", addr, nil, "faults", "fault-pw", Timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	note, closed, err := tg.KillClients(ctx)
	if err != nil || closed != 1 {
		t.Fatalf("KillClients: %q, %d closed, %v; want the other connection closed", note, closed, err)
	}
	if _, err := other.Do("PING"); err == nil {
		t.Error("the other connection still answers after CLIENT KILL")
	}
	if note, err := tg.Pause(ctx, 50*time.Millisecond); err != nil || !strings.Contains(note, "paused "+addr) {
		t.Errorf("Pause: %q, %v", note, err)
	}
	// Refused: the wrong password, and a user without the right.
	bad, _ := ParseURL("redis://faults:not-it@"+addr, "")
	if err := bad.Check(ctx, Needs{}, "inventory"); err == nil || strings.Contains(err.Error(), "not-it") || !strings.Contains(err.Error(), `user "faults"`) {
		t.Errorf("wrong password: %v", err)
	}
	c, _ := resp.Dial(ctx, "tcp", addr, nil, "faults", "fault-pw", Timeout)
	defer c.Close()
	if _, err := c.Do("ACL", "SETUSER", "faults", "-client|pause"); err == nil {
		t.Fatal("the faults user may change ACLs: the test's user is too strong")
	}
	if _, err := c.Do("GET", "x"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("a command the user may not send: want NOPERM, got %v", err)
	}
}

// TestCheckRights: Check finds, before any fault is applied, that the
// user may not send a command a fault of the schedule needs (NOPERM,
// naming the command), and passes a user who holds exactly the rights
// the faults need; its probes change nothing (the other client still
// answers, no pause holds it).
func TestCheckRights(t *testing.T) {
	addr := redisproc.Start(t, "--user", "default", "off", "--user", "pauser", "on", ">pw", "-@all", "+ping", "+client|pause",
		"--user", "killer", "on", ">pw", "-@all", "+ping", "+client|kill")
	ctx := context.Background()
	pauser, _ := ParseURL("redis://pauser:pw@"+addr, "")
	killer, _ := ParseURL("redis://killer:pw@"+addr, "")
	for _, tc := range []struct {
		tg   *Target
		need Needs
		deny string // "" when allowed
	}{
		{pauser, Needs{Pause: true}, ""},
		{pauser, Needs{KillClients: true}, "client|kill"},
		{killer, Needs{KillClients: true}, ""},
		{killer, Needs{Pause: true, KillClients: true}, "client|pause"},
	} {
		err := tc.tg.Check(ctx, tc.need, "inventory")
		switch {
		case tc.deny == "" && err != nil:
			t.Errorf("%s %+v: %v", tc.tg, tc.need, err)
		case tc.deny != "" && (err == nil || !strings.Contains(err.Error(), "NOPERM") || !strings.Contains(err.Error(), tc.deny) || !strings.Contains(err.Error(), addr)):
			t.Errorf("%s %+v: want NOPERM for %s naming %s, got %v", tc.tg, tc.need, tc.deny, addr, err)
		}
	}
	// The probes changed nothing: a client of the same Redis answers
	// at once, and was not killed.
	other, err := resp.Dial(ctx, "tcp", addr, nil, "pauser", "pw", Timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := killer.Check(ctx, Needs{KillClients: true}, "inventory"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Do("PING"); err != nil {
		t.Errorf("a client after the probes: %v", err)
	}
}

// TestParseURLReadsTheGrammarsTable: ParseURL reads every URL of the
// grammar's table (redisurl.Cases) as the table says: topology,
// addresses, master name, TLS and its server name, the credentials of the
// nodes and of the sentinels; and refuses every malformed one without
// quoting a password. The store's ParseURL is held to the same table
// (storage/redis), so a URL the suite and the store read differently
// fails one of the two tests. The faults act on whole servers (CLIENT
// PAUSE, CLIENT KILL, a failover): the database is not theirs to read.
func TestParseURLReadsTheGrammarsTable(t *testing.T) {
	redisurl.HoldTo(t, func(raw string) (redisurl.URL, string, error) {
		tg, err := ParseURL(raw, "")
		if err != nil {
			return redisurl.URL{}, "", err
		}
		got := redisurl.URL{Topology: redisurl.Topology(tg.Topology), Network: tg.network, Addrs: tg.addrs, MasterName: tg.master,
			User: tg.user, Password: tg.password, SentinelUser: tg.sentinelUser, SentinelPassword: tg.sentinelPassword, TLS: tg.tls != nil}
		serverName := ""
		if tg.tls != nil {
			got.SkipVerify, serverName = tg.tls.InsecureSkipVerify, tg.tls.ServerName
		}
		return got, serverName, nil
	}, "DB")
}

// TestTargetString: the target in words, without its passwords.
func TestTargetString(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis://u:pw@10.0.0.1:6379/0", "single node 10.0.0.1:6379"},
		{"rediss://:pw@redis.example:6380", "single node redis.example:6380 (TLS)"},
		{"unix:///run/redis.sock?db=1", "single node /run/redis.sock"},
		{"redis://:pw@10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000", "cluster, seeds 10.0.0.1:7000 10.0.0.2:7000 10.0.0.3:7000"},
		{"redis://10.0.0.1:7000?cluster=true&dial_timeout=1s", "cluster, seeds 10.0.0.1:7000"},
		{"redis://s:spw@10.0.0.1:26379?master_name=mymaster&addr=10.0.0.2:26379&password=mpw", `sentinel, master "mymaster" via 10.0.0.1:26379 10.0.0.2:26379`},
	} {
		tg, err := ParseURL(tc.url, "")
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if got := tg.String(); got != tc.want || strings.Contains(got, "pw") {
			t.Errorf("%s: %q, want %q", tc.url, got, tc.want)
		}
		if secrets := strings.Join(tg.Secrets(), " "); strings.Contains(tc.url, "pw@") != strings.Contains(secrets, "pw") {
			t.Errorf("%s: Secrets() = %q", tc.url, secrets)
		}
	}
	if _, err := ParseURL("redis://h:1", filepath.Join(t.TempDir(), "none.pem")); err == nil || !strings.Contains(err.Error(), "CA file") {
		t.Errorf("a missing CA file: %v, want an error naming the CA file", err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseURL("redis://h:1", notPEM); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v", err)
	}
}

func TestParseSlots(t *testing.T) {
	reply := []any{
		[]any{int64(10923), int64(16383), []any{"", int64(7000), "id1"}, []any{"10.0.0.2", int64(7003), "id4"}},
		[]any{int64(0), int64(10922), []any{"10.0.0.3", int64(7001), "id2"}},
	}
	shards, err := parseSlots(reply, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := shardOf(shards, StoreSlot("inventory"))
	if !ok || s.Master != "10.0.0.1:7000" || len(s.Replicas) != 1 || s.Replicas[0] != "10.0.0.2:7003" {
		t.Errorf("slot %d: %+v", StoreSlot("inventory"), s)
	}
	if _, err := parseSlots([]any{}, "h"); err == nil {
		t.Error("an empty CLUSTER SLOTS: want an error")
	}
}

func TestExec(t *testing.T) {
	ctx := context.Background()
	status, tail, err := Exec(ctx, "seq 1 9; echo oops >&2", 10*time.Second)
	if err != nil || status != 0 || tail != "6\n7\n8\n9\noops" {
		t.Errorf("Exec: %d %q %v", status, tail, err)
	}
	status, _, err = Exec(ctx, "exit 3", 10*time.Second)
	if status != 3 || err == nil || !strings.Contains(err.Error(), "status 3") {
		t.Errorf("exit 3: %d %v", status, err)
	}
	_, _, err = Exec(ctx, "sleep 30", 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "time limit") {
		t.Errorf("a command past its limit: %v", err)
	}
}

// TestTLS: rediss:// with the CA file reaches a Redis that speaks TLS
// only; without the CA its certificate is refused, and a plain redis://
// URL gets no answer it can read.
func TestTLS(t *testing.T) {
	addr, ca := redisproc.StartTLS(t, "--requirepass", "tls-pw")
	ctx := context.Background()
	tg, err := ParseURL("rediss://:tls-pw@"+addr, ca)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Check(ctx, Needs{}, "inventory"); err != nil {
		t.Fatalf("rediss:// with the CA: %v", err)
	}
	if note, err := tg.Pause(ctx, 10*time.Millisecond); err != nil {
		t.Errorf("Pause over TLS: %q, %v", note, err)
	}
	noCA, _ := ParseURL("rediss://:tls-pw@"+addr, "")
	if err := noCA.Check(ctx, Needs{}, "inventory"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("rediss:// without the CA: want a certificate error, got %v", err)
	}
	// redis:// with the CA file turns TLS on, as the server's setting does.
	on, _ := ParseURL("redis://:tls-pw@"+addr, ca)
	if err := on.Check(ctx, Needs{}, "inventory"); err != nil {
		t.Errorf("redis:// with the CA file: %v", err)
	}
	plain, _ := ParseURL("redis://:tls-pw@"+addr, "")
	if err := plain.Check(ctx, Needs{}, "inventory"); err == nil {
		t.Error("plain redis:// to a TLS port: want an error")
	}
}
