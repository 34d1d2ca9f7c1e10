// Package deploycheck holds the test of deploy/kubernetes, the files an
// operator applies to run inventory-server on Kubernetes. It is a module of
// its own, never released, so that the Kubernetes API types it decodes the
// manifests into are a dependency of this test alone.
//
// The test decodes every manifest strictly into the k8s.io/api types (an
// unknown or misspelt field fails it, as kubectl's server-side validation
// would), checks that kustomization.yaml lists exactly the objects an
// operator applies, and checks the manifests against the rest of the
// repository rather than against copies of it:
//
//   - the environment variable names against the settings table that
//     `inventory-server -h` prints, and the container port against ADDR;
//   - the image against scripts/release/image.sh (its name and its user)
//     and its tag against the server's version in versions.yaml;
//   - each probe's failure budget (periodSeconds × failureThreshold)
//     against the failover window docs/SECURITY.md states, and the
//     readiness probe's timeout against the store timeout /readyz spends;
//   - the Prometheus scrape configuration with promtool, and its port and
//     path against the pods' (the metrics' own port when the container
//     sets INVENTORY_METRICS_ADDR, which every NetworkPolicy must then
//     open to the monitoring namespace alone);
//   - and it runs the built server with the Deployment's environment, the
//     example Secrets' files in place of the mounted ones: the probes'
//     paths answer on the named port, the API accepts the key file, the
//     metrics path answers, and no key appears in the server's output.
package deploycheck
