package demo

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/petinventory/petinventory/server/apikeys"
)

// APIKeys returns the keys an example serves with: the server's own
// resolution (apikeys.Load) of keys (INVENTORY_API_KEYS) and file
// (INVENTORY_API_KEYS_FILE), or, where the server refuses to start
// (apikeys.ErrNoKeys), a random key, generated now and written once to w,
// so that a first run works without setup and the API is never served
// open. Only the examples generate a key. generated reports whether it
// did.
func APIKeys(keys []string, file string, w io.Writer) (_ []string, generated bool, err error) {
	keys, err = apikeys.Load(keys, file)
	if !errors.Is(err, apikeys.ErrNoKeys) {
		return keys, false, err
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, false, fmt.Errorf("generating an API key: %w", err)
	}
	key := hex.EncodeToString(b)
	fmt.Fprintf(w, "No INVENTORY_API_KEYS set: generated the API key for this run (shown once):\n\n    %s\n\n", key)
	return []string{key}, true, nil
}

// EnvAPIKeys is APIKeys of the environment: INVENTORY_API_KEYS (parsed
// as the server does, apikeys.ParseList) and INVENTORY_API_KEYS_FILE.
func EnvAPIKeys(w io.Writer) ([]string, error) {
	var keys []string
	if list := os.Getenv("INVENTORY_API_KEYS"); list != "" {
		var err error
		if keys, err = apikeys.ParseList(list); err != nil {
			return nil, fmt.Errorf("INVENTORY_API_KEYS: %w", err)
		}
	}
	keys, _, err := APIKeys(keys, os.Getenv("INVENTORY_API_KEYS_FILE"), w)
	return keys, err
}
