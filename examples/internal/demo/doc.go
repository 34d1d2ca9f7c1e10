// Package demo holds what the example servers share: the demo inventory,
// the API keys from the environment, a logger, and servers with production
// timeouts and graceful shutdown. It is example code: copy what you need.
package demo
