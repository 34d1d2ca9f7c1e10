package apikeys

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/petinventory/petinventory/inventory"
)

// KeyRing is an inventory.Authenticator whose keys can be replaced while
// it serves (inventory.WithAuthenticator): a replacement is one atomic
// swap, so every request is checked against either the old keys or the
// new ones, never a mix, and a request already authenticated is not
// affected.
type KeyRing struct {
	cur atomic.Pointer[keyRingState]
}

type keyRingState struct {
	auth inventory.Authenticator
	keys []string // sorted, to tell whether a replacement changes anything
}

// NewKeyRing returns a KeyRing accepting exactly keys (checked as
// inventory.NewKeyAuthenticator checks them).
func NewKeyRing(keys ...string) (*KeyRing, error) {
	r := &KeyRing{}
	if _, err := r.Replace(keys...); err != nil {
		return nil, err
	}
	return r, nil
}

// Authenticate checks key against the current keys.
func (r *KeyRing) Authenticate(ctx context.Context, key string) error {
	return r.cur.Load().auth.Authenticate(ctx, key)
}

// Replace makes keys the accepted ones and reports whether they differ
// from the previous ones. Invalid keys are an error, and the previous keys
// stay in force.
func (r *KeyRing) Replace(keys ...string) (changed bool, err error) {
	auth, err := inventory.NewKeyAuthenticator(keys...)
	if err != nil {
		return false, err
	}
	sorted := slices.Sorted(slices.Values(keys))
	old := r.cur.Swap(&keyRingState{auth: auth, keys: sorted})
	return old == nil || !slices.Equal(old.keys, sorted), nil
}

// WatchFile re-reads path (a key file: one key per line, see ReadFile) every
// interval until ctx is done, and puts the keys it holds
// in ring when its content changes. It reads the file by name, following
// symbolic links each time, so a secret that Kubernetes replaces by
// switching its ..data link is seen like a file rewritten in place. A new
// content that cannot be read, or holds no valid key, leaves the previous
// keys in force and is logged once, at ERROR; the next good content is
// logged at INFO. Keys are never logged.
func WatchFile(ctx context.Context, log *slog.Logger, path string, interval time.Duration, ring *KeyRing) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last []byte // the content last acted on
	failing := ""   // the failure last logged, while it lasts
	fail := func(msg string) {
		if msg != failing {
			log.Error("API key file: cannot use the file's new content; the previous API keys stay in force",
				"path", path, "error", msg)
			failing = msg
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			last = nil
			fail(err.Error())
			continue
		}
		if last != nil && bytes.Equal(raw, last) {
			continue
		}
		last = raw
		keys, err := parse(path, raw)
		if err == nil {
			var changed bool
			if changed, err = ring.Replace(keys...); err == nil && (changed || failing != "") {
				log.Info("API key file: API keys reloaded", "path", path, "keys", len(keys))
			}
		}
		if err != nil {
			fail(err.Error())
			continue
		}
		failing = ""
	}
}

// parse reads the keys of a key file's content: one per line, blank lines
// and lines starting with # skipped. A content without a key is an error
// naming path.
func parse(path string, raw []byte) ([]string, error) {
	var keys []string
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		keys = append(keys, line)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("API key file %s holds no key", path)
	}
	return keys, nil
}

// ReadFile reads the keys of the key file at path: one per line, blank
// lines and lines starting with # skipped; a file without a key is an
// error.
func ReadFile(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("API key file: %w", err)
	}
	return parse(path, raw)
}
