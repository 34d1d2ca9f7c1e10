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
