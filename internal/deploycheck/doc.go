// Package deploycheck holds the test of deploy/, the files an operator
// applies to run and watch inventory-server: deploy/kubernetes (and its
// seed Job, deploy/kubernetes/seed), the example overlay
// deploy/overlays/example, the alerting rules and the Alertmanager
// configuration of deploy/prometheus and the dashboard of deploy/grafana. It is a module of
// its own, never released, so that the Kubernetes API types it decodes
// the manifests into, and kustomize's library that builds the overlay,
// are dependencies of this test alone.
//
// The test decodes every manifest strictly into the k8s.io/api types (an
// unknown or misspelt field fails it, as kubectl's server-side validation
// would), checks that kustomization.yaml lists exactly the objects an
// operator applies at every change and seed/kustomization.yaml exactly
// the seed Job's, and checks the manifests against the rest of the
// repository rather than against copies of it:
//
//   - the environment variable names against the settings table that
//     `inventory-server -h` prints, and the container port against ADDR;
//   - the image against scripts/release/image.sh (its name and its user)
//     and its tag, and every object's app.kubernetes.io/version label,
//     against the server's version in versions.yaml;
//   - each probe's failure budget, (failureThreshold − 1) × periodSeconds
//     (a pod goes unready at the failureThreshold-th failure in a row),
//     against the failover window docs/SECURITY.md states, and the
//     readiness probe's timeout against the store timeout /readyz spends;
//   - what a platform team's review asks (platform_test.go): the
//     recommended labels, selectors that name the instance, a zone spread
//     by pod-template-hash, a disruption budget that lets drains evict
//     unready pods, egress rules that each name a destination (NodeLocal
//     DNSCache included), and the store initialized by the seed Job, never
//     by the Deployment; the Job reaches the Deployment's store (REDIS_URL
//     and every INVENTORY_REDIS_* setting, a file by its Secret and key);
//   - that kubectl apply -k of deploy/kubernetes and of the example
//     overlay, rendered with kustomize's library, applies no Job and no
//     container that seeds: applied again at any time, after any wipe,
//     they cannot write the seed back (overlay_test.go, TestApplyNeverSeeds);
//   - the Prometheus scrape configuration with promtool, its port and path
//     against the pods' (the metrics' own port when the container sets
//     INVENTORY_METRICS_ADDR, which every NetworkPolicy must then open to
//     the monitoring namespace alone), and its relabelling, with
//     Prometheus's own code: the namespace label is the namespace of the
//     name the targets are found by, never a constant;
//   - it runs the built server with the Deployment's environment, the
//     example Secrets' files in place of the mounted ones: the probes'
//     paths answer on the named port, the API accepts the key file, the
//     metrics path answers, and no key appears in the server's output;
//     and it runs the seed Job's container (-init-only -seed) on a TLS
//     redis-server with the URL's ACL user, which must exit 0 with the
//     store initialized (seedjob_test.go);
//   - it builds the example overlay with kustomize's library, as kubectl
//     apply -k would, and checks the result: one namespace, every image
//     pinned by digest, an egress rule to the OTLP endpoint when tracing
//     is on, and the review's checks still holding (overlay_test.go).
//
// For deploy/prometheus and deploy/grafana (observability_test.go): every
// alert has a summary, a description, a runbook_url and a case of
// alerts_test.yaml that makes it fire; promtool checks and tests the
// rules; prometheusrule.yaml and the dashboard's ConfigMap are exactly
// what alerts.yaml and the JSON make (package deploygen makes them, and
// `go generate work` rewrites them); every metric a rule or a panel selects is one a
// live inventory-server exports on a real redis-server, or one that
// Prometheus or kube-state-metrics exports, or one a rule records; and
// the names the rules select by (the Deployment, its pods, the seed Job)
// are the manifests', the wait on missing replicas longer than a rollout.
//
// One page per cause (alerting_test.go): amtool checks alertmanager.yaml
// and every alert its inhibit rules name is one of alerts.yaml; each
// failure alerts_test.yaml plays ("scenario: …", every alert listed at
// each time, so that promtool checks the whole set that fires) is sent to
// a real Alertmanager with alertmanager.yaml, whose API says the pages
// left after inhibition, which each scenario states. And live
// (live_test.go, PETINVENTORY_LONG): Redis flushed under a serving
// server, scraped by a real Prometheus with the shipped rules (their
// waits shortened) sending to that Alertmanager, fires and pages
// InventoryStoreNotInitialized alone, never InventoryStoreConfigFault.
package deploycheck
