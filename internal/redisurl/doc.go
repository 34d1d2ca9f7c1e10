// Package redisurl is the grammar of the Redis URLs the repository reads:
// the store's REDIS_URL (storage/redis's ParseURL, which maps what Parse
// understood to go-redis's options) and the Redis the conformance suite's
// faults act on (-consistency-redis). One grammar, so that a URL a
// deployment runs on is one the suite accepts, and both read it alike:
//
//   - one node: redis://[user:password@]host[:port][/db], rediss://… (TLS),
//     unix://[user:password@]/path/to/redis.sock[?db=N];
//   - a Cluster: redis://[user:password@]host:port?addr=host2:port2&addr=…
//     (every address a seed), or with one seed, ?cluster=true;
//   - a Sentinel-managed master: redis://[user:password@]sentinel1:port?master_name=NAME&addr=sentinel2:port[/db],
//     the user and password of the URL being the sentinels' and the
//     username= and password= parameters the master's (go-redis's reading).
//
// Every other parameter is one of go-redis's for that form (dial_timeout,
// pool_size, …), given once and of its type (a duration, a number, a
// boolean); those Parse leaves in URL.Params for go-redis to map. The
// parameters that would send reads to replicas are refused: the store
// must read what it wrote. Errors name what is wrong and never quote a
// password.
//
// The package uses the standard library only. Its source is the root
// module's internal/redisurl; the modules that may not import it
// (storage/redis, conformancetest) hold generated copies, tests
// included (internal/release/cmd/copyshared), which the release check
// compares with the source. Cases is the table of URLs every parser built
// on the grammar is tested against, so that the store's reading and the
// suite's are compared URL by URL.
package redisurl
