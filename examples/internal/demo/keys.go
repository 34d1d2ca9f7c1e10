package demo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/petinventory/petinventory/server/apikeys"
)

// APIKeys returns the keys the example serves with, from the first of:
//   - INVENTORY_API_KEYS: comma-separated keys;
//   - INVENTORY_API_KEYS_FILE: a file with one key per line (blank lines and
//     lines starting with # are skipped), for secrets mounted as files;
//   - a random key, generated now and written once to w, so that a first
//     run works without setup and the API is never served open.
//
// Setting both variables is an error: which one wins would be a guess.
// generated reports whether the key was generated.
func APIKeys(w io.Writer) (keys []string, generated bool, err error) {
	list, file := os.Getenv("INVENTORY_API_KEYS"), os.Getenv("INVENTORY_API_KEYS_FILE")
	switch {
	case list != "" && file != "":
		return nil, false, fmt.Errorf("both INVENTORY_API_KEYS and INVENTORY_API_KEYS_FILE are set; set one")
	case list != "":
		for _, k := range strings.Split(list, ",") {
			if k = strings.TrimSpace(k); k != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return nil, false, fmt.Errorf("INVENTORY_API_KEYS holds no key")
		}
		return keys, false, nil
	case file != "":
		keys, err = readKeyFile(file)
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

func readKeyFile(path string) ([]string, error) {
	keys, err := apikeys.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("INVENTORY_API_KEYS_FILE: %w", err)
	}
	return keys, nil
}
