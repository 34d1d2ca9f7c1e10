package hardening

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

var frameworks = []string{"gin", "fiber"}

const invalidUTF8 = "{\"quantity\":1,\"\xff\xfe\":2}"

// sized is the Content-Length header of body.
func sized(body string) string { return fmt.Sprintf("Content-Length: %d", len(body)) }

// spaces yields n bytes of JSON whitespace without holding them in memory:
// a server that read such a body whole would answer 400 (empty body), not
// 413, and its memory would grow by n.
type spaces struct{ n int64 }

func (s *spaces) Read(p []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), s.n)
	for i := range p[:k] {
		p[i] = ' '
	}
	s.n -= k
	return int(k), nil
}

// chunked frames r in HTTP/1.1 chunked encoding, 32 KiB a chunk.
func chunked(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := fmt.Fprintf(pw, "%x\r\n%s\r\n", n, buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_, _ = io.WriteString(pw, "0\r\n\r\n")
				pw.Close()
				return
			}
		}
	}()
	return pr
}

func TestAbuseOverRealSockets(t *testing.T) {
	for _, fw := range frameworks {
		t.Run(fw, func(t *testing.T) {
			r := startRedis(t)
			s := startServer(t, fw, r.url())
			addr := strings.TrimPrefix(s.Base, "http://")
			auth := "Authorization: Bearer " + apiKey
			patchHead := func(path string, extra ...string) string {
				return strings.Join(append([]string{"PATCH " + path + " HTTP/1.1", "Host: " + addr, auth, "Content-Type: application/json"}, extra...), "\r\n")
			}
			startRSS := s.rssKiB()

			cases := []struct {
				name   string
				head   string
				body   io.Reader
				status int
				code   string
			}{
				{"1 MiB body, declared", patchHead("/v1/inventory/1", "Content-Length: 1048576"), &spaces{1 << 20}, 413, "payload_too_large"},
				{"100 MiB body, declared", patchHead("/v1/inventory/1", "Content-Length: 104857600"), &spaces{100 << 20}, 413, "payload_too_large"},
				{"100 MiB body, chunked", patchHead("/v1/inventory/1", "Transfer-Encoding: chunked"), chunked(&spaces{100 << 20}), 413, "payload_too_large"},
				{"small body, chunked", patchHead("/v1/inventory/1", "Transfer-Encoding: chunked"), chunked(strings.NewReader(`{"quantity": 41}`)), 200, ""},
				{"10 000-digit petId", patchHead("/v1/inventory/"+strings.Repeat("9", 10000), sized(`{"quantity":1}`)), strings.NewReader(`{"quantity":1}`), 400, "invalid_pet_id"},
				{"invalid UTF-8", patchHead("/v1/inventory/1", sized(invalidUTF8)), strings.NewReader(invalidUTF8), 400, "invalid_json"},
				{"8 KiB header", strings.Join([]string{"GET /v1/inventory HTTP/1.1", "Host: " + addr, auth, "X-Padding: " + strings.Repeat("a", 8<<10)}, "\r\n"), nil, 200, ""},
				{"1 MiB header", strings.Join([]string{"GET /v1/inventory HTTP/1.1", "Host: " + addr, auth, "X-Padding: " + strings.Repeat("a", 1<<20)}, "\r\n"), nil, 431, ""},
			}
			for _, tc := range cases {
				got, err := raw(t, addr, tc.head, tc.body)
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if got.Status != tc.status || (tc.code != "" && got.Code() != tc.code) {
					t.Errorf("%s: got %d %.200s, want %d %s", tc.name, got.Status, got.Body, tc.status, tc.code)
				}
			}
			grown := s.rssKiB() - startRSS
			summary(t, "abuse %s: RSS %d KiB at start, grew by %d KiB while refusing 200+ MiB of bodies", fw, startRSS, grown)
			if grown > 48<<10 {
				t.Errorf("RSS grew by %d KiB while refusing large bodies: they were buffered", grown)
			}
			slowloris(t, s, addr)
			if got, err := do(context.Background(), http.DefaultClient, "GET", s.Base+"/v1/inventory", ""); err != nil || got.Status != 200 {
				t.Errorf("after the abuse, GET /v1/inventory = %v %v, want 200", got.Status, err)
			}
		})
	}
}

// slowloris holds 200 connections open, each sending its headers one byte
// at a time, while a normal client must still be answered within its
// deadline.
func slowloris(t *testing.T, s *server, addr string) {
	const conns, lasting = 200, 3 * time.Second
	stop := make(chan struct{})
	var wg sync.WaitGroup
	opened := 0
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("slowloris connection %d: %v", i, err)
		}
		opened++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			_, _ = io.WriteString(c, "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nX-Slow: ")
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte("a")); err != nil {
						return // the server gave up on us: fine
					}
				}
			}
		}()
	}
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(lasting)
	served := 0
	for time.Now().Before(deadline) {
		got, err := do(context.Background(), client, "GET", s.Base+"/v1/inventory", "")
		if err != nil || got.Status != 200 {
			t.Errorf("with %d slow connections open, a normal GET failed: %v %d", opened, err, got.Status)
			break
		}
		served++
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	summary(t, "slowloris: %d slow connections held open; %d normal requests served meanwhile, each within 2s; RSS %d KiB", opened, served, s.rssKiB())
	if rss := s.rssKiB(); rss > 256<<10 {
		t.Errorf("RSS %d KiB after slowloris: not bounded", rss)
	}
}
