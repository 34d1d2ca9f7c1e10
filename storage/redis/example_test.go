package redisstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

// Example builds a store on a Redis given by URL (here an in-process
// miniredis), seeds it only when it is empty, and updates one pet.
func Example() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()

	opts, err := redisstore.OptionsFromURL("redis://" + m.Addr() + "/0") // e.g. os.Getenv("REDIS_URL")
	if err != nil {
		panic(err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	store, err := redisstore.New(client, redisstore.WithKeyPrefix("petstore"))
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	if items, err := store.List(ctx); err == nil && len(items) == 0 {
		// Seed only an empty store, so a restart never overwrites real stock.
		err = store.Put(ctx,
			inventory.Item{PetID: 2, Quantity: 0, Status: inventory.StatusSold},
			inventory.Item{PetID: 1, Quantity: 7, Status: inventory.StatusAvailable})
		if err != nil {
			panic(err)
		}
	}

	it, err := store.SetQuantity(ctx, 1, 6)
	fmt.Println(it, err)
	_, err = store.SetQuantity(ctx, 3, 1)
	fmt.Println(errors.Is(err, inventory.ErrNotFound))
	items, err := store.List(ctx)
	fmt.Println(items, err)
	fmt.Println(client.HGetAll(ctx, "{petstore}:qty").Val())
	// Output:
	// {1 6 available} <nil>
	// true
	// [{1 6 available} {2 0 sold}] <nil>
	// map[1:6 2:0]
}
