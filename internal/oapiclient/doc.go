// Package oapiclient is the Go client that oapi-codegen generates from the
// project's OpenAPI document (inventory/openapi.yaml), kept in the
// repository so that its tests prove the document gives generated clients
// typed error codes and that such a client works against the real API.
//
// The generated code is committed and a test regenerates it with the
// oapi-codegen version pinned in go.mod's tool directive and fails when
// they differ, so a change to the document comes with its client.
package oapiclient

//go:generate env GOWORK=off go tool oapi-codegen -config oapi-codegen.yaml ../../inventory/openapi.yaml
