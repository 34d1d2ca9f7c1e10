package redisurl

// The package is a copy of the repository's internal/redisurl, so that
// this module never imports another module's internal package: edit the
// source, then run go generate here.

//go:generate go run ../../../../internal/release/cmd/copyshared -src ../../../../internal/redisurl
