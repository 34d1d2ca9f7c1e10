package conformancetest

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestConfigErrors(t *testing.T) {
	good := Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "key-0123456789"}
	for name, mutate := range map[string]func(*Config){
		"no base URL":       func(c *Config) { c.BaseURL = "" },
		"relative base URL": func(c *Config) { c.BaseURL = "/v1" },
		"ftp base URL":      func(c *Config) { c.BaseURL = "ftp://x/v1" },
		"query":             func(c *Config) { c.BaseURL += "?x=1" },
		"no key":            func(c *Config) { c.APIKey = "" },
		"key with a space":  func(c *Config) { c.APIKey = "a b" },
		"level":             func(c *Config) { c.Level = "strict" },
		"run":               func(c *Config) { c.Run = "(" },
		"body limit":        func(c *Config) { c.MaxBodyBytes = 10 },
		"timeout":           func(c *Config) { c.RequestTimeout = -time.Second },
		"parallelism":       func(c *Config) { c.Parallelism = 1 },
	} {
		c := good
		mutate(&c)
		if _, err := RunChecks(context.Background(), c); err == nil || errors.Is(err, ErrUnreachable) {
			t.Errorf("%s: err %v, want a configuration error", name, err)
		}
	}
	c := good
	c.Run = "no-such-check"
	if _, err := RunChecks(context.Background(), c); !errors.Is(err, ErrNoChecks) {
		t.Errorf("a Run that matches nothing: %v, want ErrNoChecks", err)
	}
	c.Run = "headers/"
	c.Level = LevelSpec
	if _, err := RunChecks(context.Background(), c); !errors.Is(err, ErrNoChecks) {
		t.Errorf("a contract check at level spec: %v, want ErrNoChecks", err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = RunChecks(context.Background(), Config{BaseURL: "http://" + addr + "/v1", APIKey: "key-0123456789", RequestTimeout: 2 * time.Second})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err %v, want ErrUnreachable", err)
	}
	if strings.Contains(err.Error(), "key-0123456789") {
		t.Errorf("the error holds the key: %v", err)
	}
}

func TestChecksAreNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks(LevelContract) {
		if seen[c.Name] {
			t.Errorf("two checks are named %s", c.Name)
		}
		seen[c.Name] = true
		if c.Source == "" || c.Rule == "" || !strings.Contains(c.Name, "/") {
			t.Errorf("check %s lacks a group, a source or a rule", c.Name)
		}
	}
	for _, c := range Checks(LevelSpec) {
		if !c.Spec || !seen[c.Name] || !strings.Contains(c.Source, "spec §") {
			t.Errorf("spec-level check %s is not a contract check citing the spec", c.Name)
		}
	}
}

func TestReportSummary(t *testing.T) {
	rep := &Report{Results: []Result{{Outcome: Pass}, {Outcome: Pass}, {Outcome: Fail}, {Outcome: Skip}}}
	if got := rep.Summary(); got != "2 passed, 1 failed, 1 skipped" {
		t.Errorf("Summary() = %q", got)
	}
	if !rep.Failed() {
		t.Error("Failed() = false")
	}
}
