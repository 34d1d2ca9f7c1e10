// Package wire is how the suite speaks HTTP to the deployment it judges,
// and what it knows of the API's shapes: the requests a check sends
// (Request) and the answers it gets (Response, Exchange), sent by a
// Client that never decodes a content coding; the key kept out of
// everything shown (Client.Scrub, Client.Record, Client.Curl); where an
// answer came from when it was not the API (NotFromAPI, FrontRefusal);
// the JSON helpers, the list's items (Item, ParseItems), and the rules
// of the OpenAPI document every answer is validated against
// (ValidateResponseBody, RequiredHeaders).
//
// It judges nothing: the checks (package internal/checks) and the
// checker that runs them (package internal/suite) decide what an answer
// means.
package wire
