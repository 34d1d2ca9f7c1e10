package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/alicebob/miniredis/v2"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
)

// Example builds a store on a Redis given by URL (here an in-process
// miniredis), seeds it only when it is empty, and updates one pet.
func Example() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()

	cfg, err := redisstore.ParseURL("redis://" + m.Addr() + "/0") // e.g. os.Getenv("REDIS_URL")
	if err != nil {
		panic(err)
	}
	client := cfg.NewClient()
	defer client.Close()
	// WithClientConfig lets a configuration fault name what only cfg knows.
	store, err := redisstore.New(client, redisstore.WithClientConfig(cfg), redisstore.WithKeyPrefix("petstore"))
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	// Seed only an empty store, so a restart never overwrites real stock.
	_, err = store.PutIfEmpty(ctx,
		inventory.Item{PetID: 2, Quantity: 0, Status: inventory.StatusSold},
		inventory.Item{PetID: 1, Quantity: 7, Status: inventory.StatusAvailable})
	if err != nil {
		panic(err)
	}

	it, err := store.SetQuantity(ctx, 1, 6)
	fmt.Println(it, err)
	_, err = store.SetQuantity(ctx, 3, 1)
	fmt.Println(errors.Is(err, inventory.ErrNotFound))
	items, err := store.List(ctx)
	fmt.Println(items, err)
	fmt.Println(client.HGetAll(ctx, "{petstore}:items").Val())
	// Output:
	// {1 6 available} <nil>
	// true
	// [{1 6 available} {2 0 sold}] <nil>
	// map[1:6:available 2:0:sold]
}

// ExampleParseURL names each topology in go-redis's URL forms. The
// description is what a startup log line can show: it never holds a
// password.
func ExampleParseURL() {
	for _, url := range []string{
		"redis://:secret@10.0.0.1:6379/0",
		"redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000",
		"redis://10.0.0.1:7000?cluster=true",
		"redis://10.0.0.1:26379?master_name=shop&addr=10.0.0.2:26379",
		"redis://10.0.0.1:7101,10.0.0.2:7102/0",
	} {
		cfg, err := redisstore.ParseURL(url)
		if err != nil {
			fmt.Println(err)
			continue
		}
		client := cfg.NewClient() // a *redis.ClusterClient for a Cluster; does not dial
		fmt.Println(cfg)
		_ = client.Close()
	}
	// Output:
	// single node 10.0.0.1:6379, db 0
	// cluster, seeds 10.0.0.1:7000 10.0.0.2:7000 10.0.0.3:7000
	// cluster, seeds 10.0.0.1:7000
	// sentinel, master "shop" via 10.0.0.1:26379 10.0.0.2:26379, db 0
	// redisstore: invalid Redis URL: host "10.0.0.1:7101,10.0.0.2:7102" names several addresses separated by commas; for a Cluster write redis://host1:port1?addr=host2:port2&addr=host3:port3, for Sentinel redis://sentinel1:port?master_name=NAME&addr=sentinel2:port
}

// ExampleACLRule prints the least Redis ACL rule for a store under the
// prefix "petstore", to give to ACL SETUSER.
func ExampleACLRule() {
	fmt.Println("ACL SETUSER app on >PASSWORD " + redisstore.ACLRule("petstore"))
	// Output:
	// ACL SETUSER app on >PASSWORD resetkeys resetchannels -@all ~{petstore}:* +ping +info +watch +unwatch +multi +exec +exists +hget +hset +hdel +hlen +hscan +mset +del +unlink +expire +persist +rename +xadd +xrange +xrevrange +wait +cluster|slots +command
}

// ExampleConfigFault reads what a configuration fault says: its kind,
// the Go API that fixes it, and the fix, here for a URL that names a
// Cluster node as a single node.
func ExampleConfigFault() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()
	m.SetError("MOVED 866 10.0.0.2:7001") // what a node that does not own the store's slot answers

	cfg, err := redisstore.ParseURL("redis://" + m.Addr() + "/0")
	if err != nil {
		panic(err)
	}
	client := cfg.NewClient()
	defer client.Close()
	store, err := redisstore.New(client, redisstore.WithClientConfig(cfg), redisstore.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	err = store.Ready(context.Background())
	var f *redisstore.ConfigFault
	if errors.As(err, &f) {
		fmt.Println(errors.Is(err, redisstore.ErrMisconfigured), errors.Is(err, inventory.ErrUnavailable))
		fmt.Println(f.Kind, f.Option)
		fmt.Println(f.Fix)
	}
	// Output:
	// true true
	// cluster-node-as-single URL
	// the server is a Redis Cluster node that does not own the store's keys, reached as a single node; name the Cluster instead: a URL redis://host:port?cluster=true (or ?addr=host2:port2&addr=… for more seeds), or a redis.ClusterClient given to New
}

// ExampleConfig_LoadTLSFiles connects to a managed Redis over TLS with a
// private CA, a client certificate and a password file that rotates.
func ExampleConfig_LoadTLSFiles() {
	cfg, err := redisstore.ParseURL("rediss://app@redis.example:6380/0") // e.g. os.Getenv("REDIS_URL")
	if err != nil {
		panic(err)
	}
	if err := cfg.LoadTLSFiles("/etc/redis/ca.crt", "/etc/redis/client.crt", "/etc/redis/client.key"); err != nil {
		fmt.Println(err) // names the file at fault
		return
	}
	if err := cfg.UsePasswordFile("/run/secrets/redis-password"); err != nil {
		fmt.Println(err)
		return
	}
	client := cfg.NewClient()
	defer client.Close()
	store, err := redisstore.New(client, redisstore.WithClientConfig(cfg))
	if err != nil {
		panic(err)
	}
	_ = store // serve it with inventory.New(store)
}

// ExampleInitFault: a store made with WithRequireInitialized serves only
// once initialized. Before, every call fails with an InitFault (a 503
// whose message is its Fix), which is no configuration fault; after
// Initialize, the store serves.
func ExampleInitFault() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()
	cfg, err := redisstore.ParseURL("redis://" + m.Addr() + "/0")
	if err != nil {
		panic(err)
	}
	client := cfg.NewClient()
	defer client.Close()
	store, err := redisstore.New(client, redisstore.WithRequireInitialized(),
		redisstore.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	_, err = store.List(ctx)
	if f, ok := errors.AsType[*redisstore.InitFault](err); ok {
		fmt.Println(f.Kind, "on", f.Op, "| unavailable:", errors.Is(err, inventory.ErrUnavailable),
			"| misconfigured:", errors.Is(err, redisstore.ErrMisconfigured), "| config faults:", store.Stats().ConfigFaults)
	}
	if _, err := store.Initialize(ctx, inventory.Item{PetID: 1, Quantity: 7, Status: inventory.StatusAvailable}); err != nil {
		panic(err)
	}
	items, err := store.List(ctx)
	fmt.Println(items, err, store.Uninitialized() == "")
	// Output:
	// not-initialized on list | unavailable: true | misconfigured: false | config faults: 0
	// [{1 7 available}] <nil> true
}
