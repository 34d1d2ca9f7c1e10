package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestAPIKeyFrom(t *testing.T) {
	for _, tc := range []struct {
		flag string
		env  map[string]string
		want string
	}{
		{flag: "f", env: map[string]string{"INVENTORY_API_KEY": "a", "INVENTORY_API_KEYS": "b"}, want: "f"},
		{env: map[string]string{"INVENTORY_API_KEY": "a", "INVENTORY_API_KEYS": "b"}, want: "a"},
		{env: map[string]string{"INVENTORY_API_KEYS": " b , c"}, want: "b"},
		{env: map[string]string{"INVENTORY_API_KEYS": ", ,c"}, want: "c"},
		{env: map[string]string{"INVENTORY_API_KEYS": " , "}, want: ""},
		{want: ""},
	} {
		if got := apiKeyFrom(tc.flag, func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("flag %q, env %v: %q, want %q", tc.flag, tc.env, got, tc.want)
		}
	}
}

// TestHelpNamesBothVariables: -h says where the key comes from, the
// server's variable included.
func TestHelpNamesBothVariables(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"$INVENTORY_API_KEY,", "$INVENTORY_API_KEYS"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-h does not mention %s:\n%s", want, stderr.String())
		}
	}
}

func TestNoKey(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-base-url", "http://127.0.0.1:1/v1"}, func(string) string { return "" }, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "INVENTORY_API_KEYS") {
		t.Errorf("exit %d, %s", code, stderr.String())
	}
}

// TestBadConsistencyFlags: the new flags' bad values are usage errors
// that name what is wrong, before any request.
func TestBadConsistencyFlags(t *testing.T) {
	env := func(k string) string {
		if k == "INVENTORY_API_KEY" {
			return "k"
		}
		return ""
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-base-url", "ftp://x/v1"}, "Config.Replicas"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-skip", "("}, "Config.Skip"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency", "-1s"}, "Config.Consistency"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-clients", "-3"}, "Config.ConsistencyClients"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-clients", "0"}, "at least one client"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, env, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %s", tc.args, code, stderr.String())
		}
	}
}
