package checks_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/checks"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// echoingServer answers every connection as fasthttp once answered a head
// it could not parse: a 400 whose body quotes what it read.
func echoingServer(t *testing.T, echo bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
				r := bufio.NewReader(conn)
				var head strings.Builder
				for {
					line, err := r.ReadString('\n')
					head.WriteString(line)
					if err != nil || line == "\r\n" {
						break
					}
				}
				body := "Bad Request"
				if echo {
					body = "error when reading request headers: contents: " + head.String()
				}
				_, _ = io.WriteString(conn, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n"+body)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/v1"
}

func runMalformed(t *testing.T, base string) conformancetest.Result {
	t.Helper()
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^security/malformed-head-no-echo$"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want the one check", len(rep.Results))
	}
	return rep.Results[0]
}

func TestMalformedHeadEchoFails(t *testing.T) {
	res := runMalformed(t, echoingServer(t, true))
	if res.Outcome != conformancetest.Fail || len(res.Failures) != len(checks.MalformedHeads) {
		t.Fatalf("%s with %d failures, want conformancetest.Fail with one per head (%d): %v", res.Outcome, len(res.Failures), len(checks.MalformedHeads), res.Failures)
	}
	for _, f := range res.Failures {
		if strings.Contains(f.Problem, refserver.Key) {
			t.Errorf("the failure shows the key: %s", f.Problem)
		}
		if !strings.Contains(f.Problem, "repeats the API key") {
			t.Errorf("problem %q does not say the key came back", f.Problem)
		}
	}
}

func TestMalformedHeadPasses(t *testing.T) {
	if res := runMalformed(t, echoingServer(t, false)); res.Outcome != conformancetest.Pass {
		t.Errorf("a plain 400: %s %s %v", res.Outcome, res.Reason, res.Failures)
	}
	// net/http answers each of these heads with a plain 400 of its own.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if res := runMalformed(t, srv.URL+"/v1"); res.Outcome != conformancetest.Pass {
		t.Errorf("net/http: %s %s %v", res.Outcome, res.Reason, res.Failures)
	}
}
