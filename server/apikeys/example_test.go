package apikeys_test

import (
	"context"
	"fmt"

	"github.com/petinventory/petinventory/server/apikeys"
)

// A KeyRing serves with its keys until Replace swaps them, as WatchFile
// does when the key file changes.
func ExampleKeyRing() {
	ring, err := apikeys.NewKeyRing("old-key-1111", "kept-key-2222")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	fmt.Println("old key:", ring.Authenticate(ctx, "old-key-1111") == nil)
	changed, err := ring.Replace("kept-key-2222", "new-key-3333")
	fmt.Println("replaced:", changed, err)
	fmt.Println("old key:", ring.Authenticate(ctx, "old-key-1111") == nil)
	fmt.Println("new key:", ring.Authenticate(ctx, "new-key-3333") == nil)
	_, err = ring.Replace("bad key with spaces")
	fmt.Println("invalid keys refused:", err != nil, "and the kept key still works:", ring.Authenticate(ctx, "kept-key-2222") == nil)
	// Output:
	// old key: true
	// replaced: true <nil>
	// old key: false
	// new key: true
	// invalid keys refused: true and the kept key still works: true
}
