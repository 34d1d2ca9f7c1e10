package server_test

import (
	"fmt"
	"io"

	"github.com/petinventory/petinventory/server"
)

// Parse reads the settings as inventory-server does: a flag wins over its
// environment variable, and what neither sets keeps its default.
func ExampleParse() {
	env := map[string]string{"REDIS_URL": "redis://127.0.0.1:6379/0", "INVENTORY_FRAMEWORK": "fiber", "INVENTORY_STORE_TIMEOUT": "1s"}
	cfg, err := server.Parse("inventory-server", []string{"-store-timeout", "3s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Framework, cfg.StoreTimeout, cfg.Addr, cfg.RedisPrefix)

	_, err = server.Parse("inventory-server", []string{"-framework", "echo"}, func(string) string { return "" }, io.Discard)
	fmt.Println(err)
	// Output:
	// fiber 3s :8080 inventory
	// framework "echo": want gin or fiber
}
