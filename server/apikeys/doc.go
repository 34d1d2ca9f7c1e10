// Package apikeys holds the inventory server's API keys: a KeyRing, an
// inventory.Authenticator whose keys can be replaced while it serves, and
// WatchFile, which keeps a KeyRing in step with a key file (one key per
// line), such as a Kubernetes secret mounted as a file. Use them in your
// own service to rotate keys without a restart:
//
//	ring, err := apikeys.NewKeyRing(keys...)
//	api, err := inventory.New(store, inventory.WithAuthenticator(ring))
//	go apikeys.WatchFile(ctx, log, "/etc/inventory/keys", time.Second, ring)
package apikeys
