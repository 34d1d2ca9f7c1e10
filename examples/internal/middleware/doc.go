// Package middleware holds the tests of the inventory API behind the
// compression middleware a team would put in front of it on Gin
// (gin-contrib/gzip): no answer is compressed twice or broken, with the
// middleware's defaults and with the setting docs/EMBEDDING.md recommends.
package middleware
