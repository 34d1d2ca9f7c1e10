package deploycheck

import (
	"maps"
	"testing"

	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The checks a platform team's review asks of deploy/kubernetes, beyond
// the server's own facts: recommended labels, selectors that tell two
// instances apart, a zone spread, a disruption budget that lets a drain
// through while Redis is down, egress rules that say where to, and the
// store initialized by a Job rather than by the Deployment.

// Recommended labels every object carries (app.kubernetes.io/…).
const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelVersion   = "app.kubernetes.io/version"
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelComponent = "app.kubernetes.io/component"
	zoneKey        = "topology.kubernetes.io/zone"
	// nodeLocalDNS is NodeLocal DNSCache's default address on every node.
	nodeLocalDNS = "169.254.20.10"
)

// redisPorts are the ports a Redis egress rule may open: plain, TLS,
// Sentinel.
var redisPorts = []int32{6379, 6380, 26379}

// objectMeta is every applied object's metadata, by kind and name.
func (m *manifests) objectMeta() map[string]metav1.ObjectMeta {
	metas := map[string]metav1.ObjectMeta{"Deployment " + m.deployment.Name: m.deployment.ObjectMeta}
	for _, s := range m.services {
		metas["Service "+s.Name] = s.ObjectMeta
	}
	for _, s := range m.serviceAccounts {
		metas["ServiceAccount "+s.Name] = s.ObjectMeta
	}
	for _, b := range m.pdbs {
		metas["PodDisruptionBudget "+b.Name] = b.ObjectMeta
	}
	for _, np := range m.policies {
		metas["NetworkPolicy "+np.Name] = np.ObjectMeta
	}
	for _, j := range m.jobs {
		metas["Job "+j.Name] = j.ObjectMeta
	}
	for _, c := range m.configMaps {
		metas["ConfigMap "+c.Name] = c.ObjectMeta
	}
	return metas
}

// checkPlatform reports where the manifests fall short of the review.
func checkPlatform(m *manifests, f facts) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	d := m.deployment

	// Labels: name, instance, version (the server's) and managed-by on
	// every object and on the pods.
	metas := m.objectMeta()
	metas["the Deployment's pod template"] = d.Spec.Template.ObjectMeta
	for _, j := range m.jobs {
		metas["Job "+j.Name+"'s pod template"] = j.Spec.Template.ObjectMeta
	}
	for _, what := range slices.Sorted(maps.Keys(metas)) {
		l := metas[what].Labels
		for _, key := range []string{labelName, labelInstance, labelManagedBy} {
			if l[key] == "" {
				bad("%s has no %s label", what, key)
			}
		}
		if l[labelVersion] != f.version {
			bad("%s: label %s is %q, want the server's version %s", what, labelVersion, l[labelVersion], f.version)
		}
	}
	// The Deployment's selector names the instance, so that a second
	// instance in the namespace has pods of its own (a selector cannot
	// change once applied).
	if d.Spec.Selector == nil || d.Spec.Selector.MatchLabels[labelInstance] == "" {
		bad("the Deployment's selector does not name %s: two instances in one namespace would share pods", labelInstance)
	}
	if d.Spec.Selector != nil && d.Spec.Selector.MatchLabels[labelVersion] != "" {
		bad("the Deployment's selector names %s, which changes with every release (a selector cannot change)", labelVersion)
	}

	// A zone spread that counts only the new ReplicaSet's pods.
	podLabels := labels.Set(d.Spec.Template.Labels)
	zone := false
	for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || c.LabelSelector == nil || !sel.Matches(podLabels) {
			bad("topologySpreadConstraint on %s: its labelSelector does not select the pods", c.TopologyKey)
			continue
		}
		if !slices.Contains(c.MatchLabelKeys, "pod-template-hash") {
			bad("topologySpreadConstraint on %s has no matchLabelKeys: [pod-template-hash]: a rollout's old pods skew the new ones' spread", c.TopologyKey)
		}
		if c.TopologyKey == zoneKey {
			zone = true
		}
	}
	if !zone {
		bad("no topologySpreadConstraint on %s: a zone's loss may take every replica", zoneKey)
	}

	// The disruption budget lets a drain evict unready pods.
	for _, b := range m.pdbs {
		if b.Spec.UnhealthyPodEvictionPolicy == nil || *b.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
			bad("PodDisruptionBudget %s: unhealthyPodEvictionPolicy is not AlwaysAllow: while Redis is down every pod is unready and no node drain could proceed", b.Name)
		}
	}

	// Egress: every rule says where to; DNS also to NodeLocal DNSCache;
	// Redis ports only in rules with a destination.
	dns := false
	for _, np := range m.policies {
		for i, r := range np.Spec.Egress {
			if len(r.To) == 0 {
				bad("NetworkPolicy %s: egress rule %d has no to: it allows any address, the internet included", np.Name, i+1)
			}
			if egressPort(r, 53) && slices.ContainsFunc(r.To, func(p networkingv1.NetworkPolicyPeer) bool { return ipBlockHolds(p, nodeLocalDNS) }) {
				dns = true
			}
		}
	}
	if !dns {
		bad("no NetworkPolicy lets the pods reach NodeLocal DNSCache (%s, port 53): where it runs, name resolution fails", nodeLocalDNS)
	}
	if !slices.ContainsFunc(redisPorts, func(p int32) bool { return m.egressTo(p) }) {
		bad("no NetworkPolicy lets the pods reach Redis (ports %v)", redisPorts)
	}

	// The store is initialized by the Job, never by the Deployment.
	c := &d.Spec.Template.Spec.Containers[0]
	if cc, err := m.container(); err == nil {
		c = cc
	}
	if seedArg(c.Args) != "" || slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "INVENTORY_SEED" }) {
		bad("the Deployment seeds the store (-seed or INVENTORY_SEED): a pod started after Redis lost its data would write the initial stock back over what was sold; initialize the store with the Job")
	}
	return errs
}

// egressPort reports whether an egress rule lets traffic out to port.
func egressPort(r networkingv1.NetworkPolicyEgressRule, port int32) bool {
	if len(r.Ports) == 0 {
		return true
	}
	return slices.ContainsFunc(r.Ports, func(p networkingv1.NetworkPolicyPort) bool {
		return p.Port != nil && p.Port.Type == intstr.Int && p.Port.IntVal == port
	})
}

// egressTo reports whether some policy lets the pods out to port.
func (m *manifests) egressTo(port int32) bool {
	for _, np := range m.policies {
		if slices.ContainsFunc(np.Spec.Egress, func(r networkingv1.NetworkPolicyEgressRule) bool { return egressPort(r, port) }) {
			return true
		}
	}
	return false
}

// ipBlockHolds reports whether a peer is an ipBlock holding addr.
func ipBlockHolds(p networkingv1.NetworkPolicyPeer, addr string) bool {
	if p.IPBlock == nil {
		return false
	}
	_, n, err := net.ParseCIDR(p.IPBlock.CIDR)
	return err == nil && n.Contains(net.ParseIP(addr))
}

// seedArg is the value of -seed (or --seed) in args, "" when there is none.
func seedArg(args []string) string {
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "seed" {
			continue
		}
		if hasValue {
			return value
		}
		if i+1 < len(args) {
			return args[i+1]
		}
		return "(no value)"
	}
	return ""
}

// seedJob is the Job that initializes the store, and its one container:
// inventory-server -init-only -seed, which exits once the store is
// initialized.
type seedJob struct {
	job    *batchv1.Job
	server *corev1.Container
}

func (m *manifests) seedJob() (seedJob, error) {
	if len(m.jobs) != 1 {
		return seedJob{}, fmt.Errorf("%d Jobs, want one that initializes the store", len(m.jobs))
	}
	j := m.jobs[0]
	pod := &j.Spec.Template.Spec
	if len(pod.InitContainers) != 0 || len(pod.Containers) != 1 {
		return seedJob{}, fmt.Errorf("Job %s: %d init containers and %d containers, want one container that runs inventory-server -init-only -seed",
			j.Name, len(pod.InitContainers), len(pod.Containers))
	}
	return seedJob{job: j, server: &pod.Containers[0]}, nil
}

// checkSeedJob checks the Job against the Deployment: the same image and
// store, -init-only with a seed it can read (so that the Job completes
// once the store is initialized, and only then), no port nor API key
// (-init-only serves nothing), and pods that no Service or budget takes
// for the server's.
func checkSeedJob(m *manifests, f facts) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	sj, err := m.seedJob()
	if err != nil {
		return []error{err}
	}
	j, s := sj.job, sj.server
	c, err := m.container()
	if err != nil {
		return nil // check reports it
	}
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever && j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		bad("Job %s: restartPolicy %q, want Never or OnFailure", j.Name, j.Spec.Template.Spec.RestartPolicy)
	}
	if j.Spec.ActiveDeadlineSeconds == nil {
		bad("Job %s has no activeDeadlineSeconds: a store that cannot be initialized would keep it running", j.Name)
	}
	if s.Image != c.Image {
		bad("Job %s: container %s runs %s, the Deployment %s", j.Name, s.Name, s.Image, c.Image)
	}
	if !slices.Contains(s.Args, "-init-only") || seedArg(s.Args) == "" {
		bad("Job %s: container %s's args are %v, want -init-only and -seed: without them it would serve, and the Job never complete", j.Name, s.Name, s.Args)
	}
	if len(s.Ports) > 0 || s.StartupProbe != nil || s.ReadinessProbe != nil || s.LivenessProbe != nil {
		bad("Job %s: container %s has ports or probes: -init-only listens on none", j.Name, s.Name)
	}
	errs = append(errs, m.sameStore(sj, c, f)...)
	for _, e := range s.Env {
		if _, ok := f.settings[e.Name]; !ok {
			bad("Job %s: environment variable %s is not a setting of inventory-server (-h lists them)", j.Name, e.Name)
		}
		if strings.HasPrefix(e.Name, "INVENTORY_API_KEYS") {
			bad("Job %s: %s: -init-only needs no API key, and a Job's pod should not hold one", j.Name, e.Name)
		}
		if strings.HasSuffix(e.Name, "_FILE") {
			if _, _, _, err := m.secretFileIn(j.Spec.Template.Spec.Volumes, s, e.Value); err != nil {
				bad("Job %s: %s=%s: %v", j.Name, e.Name, e.Value, err)
			}
		}
	}
	if _, err := m.seedItems(s); err != nil {
		bad("Job %s: %v", j.Name, err)
	}

	// The Job's pods are no server's: no Service, budget or Deployment
	// selects them; a NetworkPolicy does (they reach Redis).
	jobLabels := labels.Set(j.Spec.Template.Labels)
	selectors := map[string]*metav1.LabelSelector{"Deployment " + m.deployment.Name: m.deployment.Spec.Selector}
	for _, svc := range m.services {
		selectors["Service "+svc.Name] = &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}
	}
	for _, b := range m.pdbs {
		selectors["PodDisruptionBudget "+b.Name] = b.Spec.Selector
	}
	for what, sel := range selectors {
		if s, err := metav1.LabelSelectorAsSelector(sel); err == nil && s.Matches(jobLabels) {
			bad("%s selects the seed Job's pods (%v): they are not servers", what, jobLabels)
		}
	}
	if !slices.ContainsFunc(m.policies, func(np *networkingv1.NetworkPolicy) bool {
		s, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		return err == nil && s.Matches(jobLabels)
	}) {
		bad("no NetworkPolicy selects the seed Job's pods")
	}
	return errs
}

// sameStore reports every Redis setting (REDIS_URL, INVENTORY_REDIS_*)
// in which the Job's container differs from the Deployment's c, with the
// server's defaults for the settings either leaves unset: a file setting
// by the Secret and key it is mounted from (each pod mounts it where it
// will), any other by its value. Any difference is another store, or the
// same reached otherwise: another prefix, user, TLS, or replica
// acknowledgements than the servers'.
func (m *manifests) sameStore(sj seedJob, c *corev1.Container, f facts) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(f.settings)) {
		if name != "REDIS_URL" && !strings.HasPrefix(name, "INVENTORY_REDIS_") {
			continue
		}
		a, b := env(sj.server, f, name), env(c, f, name)
		_, aSet := containerEnv(sj.server, name)
		_, bSet := containerEnv(c, name)
		if strings.HasSuffix(name, "_FILE") && aSet && bSet {
			a, b = m.secretOf(sj.job.Spec.Template.Spec.Volumes, sj.server, a), m.secretOf(m.deployment.Spec.Template.Spec.Volumes, c, b)
		}
		if a != b {
			errs = append(errs, fmt.Errorf("Job %s: %s is %q, the Deployment's %q: it would initialize another store, or reach it otherwise", sj.job.Name, name, a, b))
		}
	}
	return errs
}

// secretOf names the Secret and key a file of container c (of a pod with
// volumes) is mounted from, as "Secret SECRET key KEY", or says why it is
// none.
func (m *manifests) secretOf(volumes []corev1.Volume, c *corev1.Container, file string) string {
	_, s, key, err := m.secretFileIn(volumes, c, file)
	if err != nil {
		return "no Secret: " + err.Error()
	}
	return "Secret " + s.Name + " key " + key
}

// seedItems reads the seed the Job's server is given: a file of a
// ConfigMap of the directory, a JSON array of items.
func (m *manifests) seedItems(s *corev1.Container) ([]json.RawMessage, error) {
	path := seedArg(s.Args)
	for _, vm := range s.VolumeMounts {
		rel, ok := strings.CutPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/")
		if !ok {
			continue
		}
		i := slices.IndexFunc(m.jobs[0].Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
		if i < 0 || m.jobs[0].Spec.Template.Spec.Volumes[i].ConfigMap == nil {
			return nil, fmt.Errorf("-seed %s: volume %s is not a ConfigMap", path, vm.Name)
		}
		name := m.jobs[0].Spec.Template.Spec.Volumes[i].ConfigMap.Name
		j := slices.IndexFunc(m.configMaps, func(c *corev1.ConfigMap) bool { return c.Name == name })
		if j < 0 {
			return nil, fmt.Errorf("-seed %s: ConfigMap %s is not among the objects", path, name)
		}
		data, ok := m.configMaps[j].Data[rel]
		if !ok {
			return nil, fmt.Errorf("-seed %s: ConfigMap %s has no key %s", path, name, rel)
		}
		var items []json.RawMessage
		if err := json.Unmarshal([]byte(data), &items); err != nil {
			return nil, fmt.Errorf("-seed %s: ConfigMap %s's %s is not a JSON array of items: %v", path, name, rel, err)
		}
		return items, nil
	}
	return nil, fmt.Errorf("-seed %s: not a file under a volume mount of the container", path)
}

// TestProbeBudget: a pod goes unready at the failureThreshold-th failed
// probe in a row, (failureThreshold − 1) × periodSeconds after the first.
func TestProbeBudget(t *testing.T) {
	for _, tc := range []struct {
		period, failures int32
		want             int
	}{{10, 4, 30}, {10, 5, 40}, {0, 0, 20}, {5, 1, 0}} {
		if got := probeBudget(&corev1.Probe{PeriodSeconds: tc.period, FailureThreshold: tc.failures}); got != tc.want {
			t.Errorf("probeBudget(period %d, failureThreshold %d) = %d, want %d", tc.period, tc.failures, got, tc.want)
		}
	}
}

// TestSeedArg reads -seed in each form the flag package accepts.
func TestSeedArg(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-seed", "demo"}, "demo"}, {[]string{"--seed=/s/i.json"}, "/s/i.json"}, {[]string{"-addr", ":1", "-seed=empty"}, "empty"},
		{[]string{"-seed"}, "(no value)"}, {[]string{"-version"}, ""}, {[]string{"seed", "x"}, ""},
	} {
		if got := seedArg(tc.args); got != tc.want {
			t.Errorf("seedArg(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
