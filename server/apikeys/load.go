package apikeys

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoKeys is Load's error when neither INVENTORY_API_KEYS nor
// INVENTORY_API_KEYS_FILE gives a key: the server does not start without
// one (it never serves the API open, nor makes up a key that three
// replicas would each make differently). Its text says how to make one.
var ErrNoKeys = errors.New("no API key: set INVENTORY_API_KEYS (comma-separated keys) or INVENTORY_API_KEYS_FILE " +
	"(a file with one key per line); make a key with `openssl rand -hex 32`")

// ParseList returns the keys of a comma-separated list, as
// INVENTORY_API_KEYS holds them (spaces around a key are dropped); a list
// without a key is an error.
func ParseList(list string) ([]string, error) {
	var keys []string
	for _, k := range strings.Split(list, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("holds no key")
	}
	return keys, nil
}

// Load returns the keys to serve with: keys (INVENTORY_API_KEYS, parsed
// by ParseList) when there are some, else those of the key file at path
// (INVENTORY_API_KEYS_FILE), else ErrNoKeys. Both at once is an error:
// which one wins would be a guess. It is the one key resolution of the
// server and of the examples (which generate a key on ErrNoKeys).
func Load(keys []string, path string) ([]string, error) {
	switch {
	case len(keys) > 0 && path != "":
		return nil, errors.New("both INVENTORY_API_KEYS and INVENTORY_API_KEYS_FILE are set; set one")
	case len(keys) > 0:
		return keys, nil
	case path != "":
		keys, err := ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("INVENTORY_API_KEYS_FILE: %w", err)
		}
		return keys, nil
	}
	return nil, ErrNoKeys
}
