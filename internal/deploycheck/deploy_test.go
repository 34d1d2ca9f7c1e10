package deploycheck

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/prometheus/prometheus/model/relabel"
	yamlv2 "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// deployDir is deploy/kubernetes, from this package's directory.
var deployDir = filepath.Join("..", "..", "deploy", "kubernetes")

var serverBin string

func TestMain(m *testing.M) {
	proctest.Main(m, "deploycheck", proctest.Binary{Pkg: "../../server/cmd/inventory-server", Name: "inventory-server", Path: &serverBin})
}

// repoFacts reads what the repository says: the server's -h, image.sh,
// versions.yaml and docs/SECURITY.md.
func repoFacts(t *testing.T) facts {
	t.Helper()
	usage, err := exec.Command(serverBin, "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("inventory-server -h: %v\n%s", err, usage)
	}
	var f facts
	if f.settings, err = settingsFromUsage(string(usage)); err != nil {
		t.Fatal(err)
	}
	script := readFile(t, "..", "..", "scripts", "release", "image.sh")
	if f.image, f.uid, f.gid, err = imageFacts(script); err != nil {
		t.Fatal(err)
	}
	if f.version, err = moduleVersion([]byte(readFile(t, "..", "..", "versions.yaml")), serverModule); err != nil {
		t.Fatal(err)
	}
	if f.failoverSeconds, err = failoverWindow(readFile(t, "..", "..", "docs", "SECURITY.md")); err != nil {
		t.Fatal(err)
	}
	return f
}

func readFile(t *testing.T, elem ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(elem...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readDeploy(t *testing.T) *manifests {
	t.Helper()
	m, err := readManifests(deployDir)
	if err != nil {
		t.Fatalf("deploy/kubernetes: %v", err)
	}
	return m
}

// TestManifests decodes deploy/kubernetes strictly and checks it against
// the repository.
func TestManifests(t *testing.T) {
	m := readDeploy(t)
	f := repoFacts(t)
	for _, err := range check(m, f) {
		t.Error(err)
	}
	t.Logf("checked %s, %d Secret example(s), against %d settings, image %s:%s as %d:%d, failover window %d s",
		strings.Join(m.objectFiles, ", "), len(m.secrets), len(f.settings), f.image, f.version, f.uid, f.gid, f.failoverSeconds)
}

// TestScrapeConfig has promtool validate the Prometheus configuration (it
// decodes strictly). CI installs prometheus and sets PROMETHEUS_REQUIRED.
func TestScrapeConfig(t *testing.T) {
	out, err := exec.Command(promtool(t), "check", "config", filepath.Join(deployDir, scrapeConfigFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config %s: %v\n%s", scrapeConfigFile, err, out)
	}
}

// promtool is promtool's path; without it the test is skipped, or fails
// when PROMETHEUS_REQUIRED says it must run (CI installs prometheus).
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("PROMETHEUS_REQUIRED") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus), and PROMETHEUS_REQUIRED is set")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	return path
}

// TestServerRunsWithTheManifests runs inventory-server with the
// Deployment's environment and the example Secrets' files where the pod
// would mount them, on a Redis address nobody listens on: the probes'
// paths answer (liveness 200, readiness 503 saying why), the API takes the
// example's keys, the metrics path answers, SIGTERM ends it with status 0,
// and its output holds no key and no password.
func TestServerRunsWithTheManifests(t *testing.T) {
	m := readDeploy(t)
	c, err := m.container()
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(redistest.FreePort(t))
	env, keys, secrets, err := serverEnv(m, t.TempDir(), "127.0.0.1:"+strconv.Itoa(redistest.FreePort(t)), metricsAddr)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("the API key Secret example holds no key")
	}
	// The test's own environment (REDIS_URL in CI, for one) must not add
	// settings the pod lacks: every other setting is emptied, which the
	// server reads as unset.
	for name := range repoFacts(t).settings {
		if _, ok := containerEnv(c, name); !ok {
			env = append(env, name+"=")
		}
	}
	s := proctest.Start(t, serverBin, keys[0], env, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}

	get := func(path string) proctest.Reply {
		t.Helper()
		r, err := proctest.Do(ctx, client, keys[0], http.MethodGet, s.Base+path, "")
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return r
	}
	if r := get(c.LivenessProbe.HTTPGet.Path); r.Status != http.StatusOK {
		t.Errorf("livenessProbe GET %s: %d %s, want 200", c.LivenessProbe.HTTPGet.Path, r.Status, r.Body)
	}
	if r := get(c.ReadinessProbe.HTTPGet.Path); r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), `"status":"unavailable"`) {
		t.Errorf("readinessProbe GET %s with Redis out of reach: %d %s, want 503 saying unavailable", c.ReadinessProbe.HTTPGet.Path, r.Status, r.Body)
	}
	for _, k := range keys {
		r, err := proctest.Do(ctx, client, k, http.MethodGet, s.Base+"/v1/inventory", "")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusServiceUnavailable { // not 401: the key file was read; 503: Redis is out of reach
			t.Errorf("GET /v1/inventory with a key of the Secret example: %d %s, want 503 (the key accepted, Redis out of reach)", r.Status, r.Body)
		}
	}
	resp, err := client.Get(s.Base + "/v1/inventory")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/inventory without a key: %d, want 401", resp.StatusCode)
	}
	metricsPath := m.deployment.Spec.Template.Annotations["prometheus.io/path"]
	metricsBase := s.Base
	if v, ok := containerEnv(c, metricsAddrSetting); ok && v != "" {
		metricsBase = "http://" + metricsAddr
	}
	r, err := proctest.Do(ctx, client, "", http.MethodGet, metricsBase+metricsPath, "")
	if err != nil || r.Status != http.StatusOK || !strings.Contains(string(r.Body), "# TYPE ") {
		t.Errorf("GET %s%s (the scrape path, with no key): %v %d, want 200 with Prometheus metrics", metricsBase, metricsPath, err, r.Status)
	}

	s.Stop()
	if _, err := s.Wait(0); err != nil {
		t.Errorf("after SIGTERM the server exited with %v, want status 0", err)
	}
	for _, secret := range append(keys, secrets...) {
		if strings.Contains(s.Logs.String(), secret) {
			t.Errorf("the server's output holds a secret of the examples (%.8s…)", secret)
		}
	}
}

// TestCheckCatches drives every check with a copy of the manifests broken
// in one way, and the repository's facts changed in others.
func TestCheckCatches(t *testing.T) {
	base := readDeploy(t)
	f := repoFacts(t)
	if errs := check(base, f); len(errs) > 0 {
		t.Fatalf("the manifests do not pass as they are: %v", errors.Join(errs...))
	}
	for _, tc := range []struct {
		name  string
		edit  func(m *manifests, f *facts)
		wants string
	}{
		{"unknown setting", func(m *manifests, f *facts) {
			ctr(m).Env = append(ctr(m).Env, corev1.EnvVar{Name: "INVENTORY_NO_SUCH_SETTING", Value: "1"})
		}, "INVENTORY_NO_SUCH_SETTING is not a setting"},
		{"keys in a variable", func(m *manifests, f *facts) {
			ctr(m).Env = append(ctr(m).Env, corev1.EnvVar{Name: "INVENTORY_API_KEYS", Value: "k"})
		}, "INVENTORY_API_KEYS_FILE, not INVENTORY_API_KEYS"},
		{"secret through valueFrom", func(m *manifests, f *facts) {
			ctr(m).Env[0].ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}
		}, "takes valueFrom"},
		{"a file on no mount", func(m *manifests, f *facts) { setEnv(m, "INVENTORY_API_KEYS_FILE", "/etc/keys") }, "under no volume mount"},
		{"a key the Secret lacks", func(m *manifests, f *facts) { setEnv(m, "INVENTORY_API_KEYS_FILE", "/run/secrets/api/other") }, "whose example has no such key"},
		{"subPath", func(m *manifests, f *facts) { ctr(m).VolumeMounts[0].SubPath = "keys" }, "subPath"},
		{"an unused Secret example", func(m *manifests, f *facts) {
			m.secrets["stray"] = &corev1.Secret{}
		}, "mounted by no volume"},
		{"image version", func(m *manifests, f *facts) { f.version = "v9.9.9" }, "want petinventory/inventory-server:v9.9.9"},
		{"image user", func(m *manifests, f *facts) { f.uid = 1000 }, "want the image's 1000"},
		{"writable root", func(m *manifests, f *facts) { ctr(m).SecurityContext.ReadOnlyRootFilesystem = nil }, "readOnlyRootFilesystem"},
		{"a longer failover", func(m *manifests, f *facts) { f.failoverSeconds = 60 }, "not above the failover window"},
		{"readiness budget", func(m *manifests, f *facts) { ctr(m).ReadinessProbe.FailureThreshold = 2 }, "readinessProbe's budget"},
		{"probe port by number", func(m *manifests, f *facts) { ctr(m).LivenessProbe.HTTPGet.Port = intstr.FromInt(8080) }, "name the container's port"},
		{"probe port name", func(m *manifests, f *facts) { ctr(m).ReadinessProbe.HTTPGet.Port = intstr.FromString("web") }, `"web" names no port`},
		{"listen port", func(m *manifests, f *facts) { f.settings["ADDR"] = ":9090" }, "the server listens on 9090"},
		{"readiness timeout", func(m *manifests, f *facts) { setEnv(m, "INVENTORY_STORE_TIMEOUT", "5s") }, "store timeout"},
		{"kustomization misses a file", func(m *manifests, f *facts) { m.kustomization.Resources = m.kustomization.Resources[1:] }, "does not list"},
		{"kustomization applies an example", func(m *manifests, f *facts) {
			m.kustomization.Resources = append(m.kustomization.Resources, "secret-api-keys"+exampleSuffix)
		}, "never applied"},
		{"Service selector", func(m *manifests, f *facts) { m.services[0].Spec.Selector = map[string]string{"app": "other"} }, "does not select"},
		{"Service port", func(m *manifests, f *facts) { m.services[0].Spec.Ports[0].TargetPort = intstr.FromString("api") }, "targetPort api names no port"},
		{"PodDisruptionBudget", func(m *manifests, f *facts) { v := intstr.FromInt(2); m.pdbs[0].Spec.MaxUnavailable = &v }, "fewer than 2"},
		{"scrape port", func(m *manifests, f *facts) { m.scrape.ScrapeConfigs[0].DNSSDConfigs[0].Port = 9999 }, "the pods' metrics port"},
		{"scrape path", func(m *manifests, f *facts) { m.scrape.ScrapeConfigs[0].MetricsPath = "/stats" }, "metrics_path"},
		{"scrape service", func(m *manifests, f *facts) {
			m.scrape.ScrapeConfigs[0].DNSSDConfigs[0].Names = []string{"inventory-server.inventory.svc"}
		}, "headless Service"},
		{"policy port", func(m *manifests, f *facts) { m.policies[0].Spec.Ingress[0].Ports[0].Port = nil }, "not a name of the container's ports"},
		{"policy port name", func(m *manifests, f *facts) {
			v := intstr.FromString("api")
			m.policies[0].Spec.Ingress[0].Ports[0].Port = &v
		}, "ingress port api names no port"},
		{"service account", func(m *manifests, f *facts) { m.serviceAccounts = nil }, "serviceAccountName"},
		{"two replicas", func(m *manifests, f *facts) { n := int32(2); m.deployment.Spec.Replicas = &n }, "fewer than 2"},
		{"REDIS_URL unset", func(m *manifests, f *facts) {
			ctr(m).Env = slices.DeleteFunc(ctr(m).Env, func(e corev1.EnvVar) bool { return e.Name == "REDIS_URL" })
		}, "REDIS_URL is not set"},
		{"metrics port not in the container", func(m *manifests, f *facts) {
			f.settings[metricsAddrSetting] = "the API's address"
			setEnv(m, metricsAddrSetting, ":9191")
		}, "port 9191, which is no port of the container"},
		{"metrics port open to all", func(m *manifests, f *facts) {
			f.settings[metricsAddrSetting] = "the API's address"
			setEnv(m, metricsAddrSetting, ":9191")
			ctr(m).Ports = append(ctr(m).Ports, corev1.ContainerPort{Name: "metrics-b", ContainerPort: 9191})
			m.policies[0].Spec.Ingress = append(m.policies[0].Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
				Ports: []networkingv1.NetworkPolicyPort{{Port: ptr(intstr.FromString("metrics-b"))}}})
		}, "admits the metrics port metrics-b from outside the monitoring namespace"},
		{"metrics port closed", func(m *manifests, f *facts) {
			f.settings[metricsAddrSetting] = "the API's address"
			setEnv(m, metricsAddrSetting, ":9191")
			ctr(m).Ports = append(ctr(m).Ports, corev1.ContainerPort{Name: "metrics-b", ContainerPort: 9191})
		}, "no NetworkPolicy admits the metrics port metrics-b"},
		{"metrics scraped on another port", func(m *manifests, f *facts) {
			f.settings[metricsAddrSetting] = "the API's address"
			setEnv(m, metricsAddrSetting, ":9191")
			ctr(m).Ports = append(ctr(m).Ports, corev1.ContainerPort{Name: "metrics-b", ContainerPort: 9191})
			m.policies[0].Spec.Ingress = append(m.policies[0].Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
				From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": monitoringNamespace}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: ptr(intstr.FromString("metrics-b"))}}})
		}, "want A records and the pods' metrics port 9191"},
		{"annotations", func(m *manifests, f *facts) { m.deployment.Spec.Template.Annotations["prometheus.io/port"] = "9999" }, "prometheus.io annotations"},
		{"readiness unready within the failover", func(m *manifests, f *facts) { ctr(m).ReadinessProbe.FailureThreshold = 4 }, "(failureThreshold − 1) × periodSeconds = 30 s"},
		{"no instance label", func(m *manifests, f *facts) { delete(m.services[0].Labels, labelInstance) }, "has no app.kubernetes.io/instance label"},
		{"version label", func(m *manifests, f *facts) { f.version = "v9.9.9" }, `label app.kubernetes.io/version is "v0.1.0", want the server's version v9.9.9`},
		{"selector without instance", func(m *manifests, f *facts) { delete(m.deployment.Spec.Selector.MatchLabels, labelInstance) }, "selector does not name app.kubernetes.io/instance"},
		{"selector with version", func(m *manifests, f *facts) {
			m.deployment.Spec.Selector.MatchLabels[labelVersion] = "v0.1.0"
		}, "changes with every release"},
		{"no zone spread", func(m *manifests, f *facts) {
			m.deployment.Spec.Template.Spec.TopologySpreadConstraints = m.deployment.Spec.Template.Spec.TopologySpreadConstraints[1:]
		}, "no topologySpreadConstraint on topology.kubernetes.io/zone"},
		{"spread without matchLabelKeys", func(m *manifests, f *facts) {
			m.deployment.Spec.Template.Spec.TopologySpreadConstraints[0].MatchLabelKeys = nil
		}, "no matchLabelKeys: [pod-template-hash]"},
		{"PDB blocks drains", func(m *manifests, f *facts) { m.pdbs[0].Spec.UnhealthyPodEvictionPolicy = nil }, "unhealthyPodEvictionPolicy is not AlwaysAllow"},
		{"egress anywhere", func(m *manifests, f *facts) {
			eg := m.policies[0].Spec.Egress
			eg[len(eg)-1].To = nil
		}, "has no to: it allows any address"},
		{"no NodeLocal DNSCache", func(m *manifests, f *facts) { m.policies[0].Spec.Egress[0].To = m.policies[0].Spec.Egress[0].To[:1] }, "NodeLocal DNSCache (169.254.20.10"},
		{"no Redis egress", func(m *manifests, f *facts) { m.policies[0].Spec.Egress = m.policies[0].Spec.Egress[:1] }, "reach Redis"},
		{"seed in the Deployment", func(m *manifests, f *facts) { ctr(m).Args = []string{"-seed=demo"} }, "the Deployment seeds the store"},
		{"seed variable in the Deployment", func(m *manifests, f *facts) { setEnv(m, "INVENTORY_SEED", "demo") }, "the Deployment seeds the store"},
		{"no seed Job", func(m *manifests, f *facts) { m.jobs = nil }, "0 Jobs"},
		{"Job seeds another store", func(m *manifests, f *facts) {
			sj, _ := m.seedJob()
			sj.server.Env = append(sj.server.Env, corev1.EnvVar{Name: "INVENTORY_REDIS_PREFIX", Value: "other"})
			sj.server.Env = slices.DeleteFunc(sj.server.Env, func(e corev1.EnvVar) bool { return e.Name == "INVENTORY_REDIS_PREFIX" && e.Value != "other" })
		}, `INVENTORY_REDIS_PREFIX is "other"`},
		{"Job serves", func(m *manifests, f *facts) {
			sj, _ := m.seedJob()
			sj.server.Args = []string{"-seed", "/seed/items.json"}
		}, "want -init-only and -seed"},
		{"Job without seed", func(m *manifests, f *facts) { sj, _ := m.seedJob(); sj.server.Args = []string{"-init-only"} }, "want -init-only and -seed"},
		{"Job with a port", func(m *manifests, f *facts) {
			sj, _ := m.seedJob()
			sj.server.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
		}, "-init-only listens on none"},
		{"Job with API keys", func(m *manifests, f *facts) {
			sj, _ := m.seedJob()
			sj.server.Env = append(sj.server.Env, corev1.EnvVar{Name: "INVENTORY_API_KEYS", Value: "k"})
		}, "-init-only needs no API key"},
		{"Job sidecar", func(m *manifests, f *facts) {
			pod := &m.jobs[0].Spec.Template.Spec
			pod.InitContainers = append(pod.InitContainers, pod.Containers[0])
		}, "1 init containers and 1 containers"},
		{"Job image", func(m *manifests, f *facts) { sj, _ := m.seedJob(); sj.server.Image = "busybox" }, "container inventory-server runs busybox"},
		{"Job seed not JSON", func(m *manifests, f *facts) { m.configMaps[0].Data["items.json"] = "{" }, "is not a JSON array of items"},
		{"Job seed elsewhere", func(m *manifests, f *facts) {
			sj, _ := m.seedJob()
			sj.server.Args = []string{"-init-only", "-seed", "/etc/items.json"}
		}, "not a file under a volume mount"},
		{"Job pods served", func(m *manifests, f *facts) {
			m.jobs[0].Spec.Template.Labels[labelComponent] = "server"
		}, "selects the seed Job's pods"},
		{"Job without deadline", func(m *manifests, f *facts) { m.jobs[0].Spec.ActiveDeadlineSeconds = nil }, "no activeDeadlineSeconds"},
		{"Job asks other acknowledgements", func(m *manifests, f *facts) {
			sj, _ := m.seedJob()
			sj.server.Env = append(sj.server.Env, corev1.EnvVar{Name: "INVENTORY_REDIS_REPLICA_ACKS", Value: "2"})
		}, `INVENTORY_REDIS_REPLICA_ACKS is "2", the Deployment's "0"`},
		{"Job password from another Secret", func(m *manifests, f *facts) {
			sj, _ := m.seedJob()
			pod := &m.jobs[0].Spec.Template.Spec
			pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "inventory-api-keys"}}})
			sj.server.VolumeMounts = append(sj.server.VolumeMounts, corev1.VolumeMount{Name: "keys", MountPath: "/run/keys", ReadOnly: true})
			for i := range sj.server.Env {
				if sj.server.Env[i].Name == "INVENTORY_REDIS_PASSWORD_FILE" {
					sj.server.Env[i].Value = "/run/keys/keys"
				}
			}
		}, `INVENTORY_REDIS_PASSWORD_FILE is "Secret inventory-api-keys key keys", the Deployment's "Secret inventory-redis-password key password"`},
		{"kustomization applies the seed", func(m *manifests, f *facts) {
			m.kustomization.Resources = append(m.kustomization.Resources, seedDir)
		}, "every kubectl apply -k would run the seed again"},
		{"seed kustomization misses the Job", func(m *manifests, f *facts) {
			m.seedKustomization.Resources = slices.DeleteFunc(m.seedKustomization.Resources, func(r string) bool { return strings.HasPrefix(r, "job-") })
		}, "seed/kustomization.yaml does not list job-seed.yaml"},
		{"scrape namespace a constant", func(m *manifests, f *facts) {
			m.relabel[0] = mustRelabel("- target_label: namespace\n  replacement: inventory\n")
		}, `relabelled with namespace "inventory" (kept: true), want "elsewhere"`},
		{"scrape without namespace", func(m *manifests, f *facts) { m.relabel[0] = nil }, `relabelled with namespace ""`},
		{"scrape drops its targets", func(m *manifests, f *facts) {
			m.relabel[0] = append(m.relabel[0], mustRelabel("- source_labels: [__meta_dns_name]\n  regex: other.*\n  action: keep\n")...)
		}, "(kept: false)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := readDeploy(t) // a fresh copy to break
			ff := f
			ff.settings = map[string]string{}
			for k, v := range f.settings {
				ff.settings[k] = v
			}
			tc.edit(m, &ff)
			errs := check(m, ff)
			if len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), tc.wants) {
				t.Errorf("check reported %v, want an error containing %q", errs, tc.wants)
			}
		})
	}
}

// mustRelabel reads relabel_configs as Prometheus does.
func mustRelabel(doc string) []*relabel.Config {
	var cfgs []*relabel.Config
	if err := yamlv2.UnmarshalStrict([]byte(doc), &cfgs); err != nil {
		panic(err)
	}
	return cfgs
}

// TestSeedJobSameStoreByMount: the Job may mount the password's Secret
// where it will; what counts is the Secret and key, not the path.
func TestSeedJobSameStoreByMount(t *testing.T) {
	m := readDeploy(t)
	sj, err := m.seedJob()
	if err != nil {
		t.Fatal(err)
	}
	for i := range sj.server.VolumeMounts {
		if sj.server.VolumeMounts[i].MountPath == "/run/secrets/redis" {
			sj.server.VolumeMounts[i].MountPath = "/var/run/redis-password"
		}
	}
	for i := range sj.server.Env {
		if sj.server.Env[i].Name == "INVENTORY_REDIS_PASSWORD_FILE" {
			sj.server.Env[i].Value = "/var/run/redis-password/password"
		}
	}
	if errs := checkSeedJob(m, repoFacts(t)); len(errs) > 0 {
		t.Errorf("the Job's password file mounted elsewhere from the same Secret: %v", errors.Join(errs...))
	}
}

func ctr(m *manifests) *corev1.Container {
	c, err := m.container()
	if err != nil {
		panic(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func setEnv(m *manifests, name, value string) {
	c := ctr(m)
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i].Value = value
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
}

// TestDecodeStrict: a misspelt or unknown field, a value of the wrong
// type, an unknown kind and a Secret outside an example are refused.
func TestDecodeStrict(t *testing.T) {
	for _, tc := range []struct{ name, doc, wants string }{
		{"misspelt field", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 3}\n", "unknown field"},
		{"misplaced field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80, containerPort: 80}]}\n", "unknown field"},
		{"wrong type", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: x}\nspec: {selector: app}\n", "cannot unmarshal"},
		{"duplicate field", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: x}\nmetadata: {name: y}\n", "already set"},
		{"unknown kind", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\n", "not a kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeObject([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.wants) {
				t.Errorf("decodeObject: %v, want an error containing %q", err, tc.wants)
			}
		})
	}
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"deployment.yaml":      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
		"secret.yaml":          "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: v}\n",
		"service.example.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n",
		kustomizationFile:      "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml]\nnamePrefix: x-\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := readManifests(dir)
	for _, want := range []string{"secret.yaml: a Secret outside an example", "service.example.yaml: an example must be a Secret", `kustomization.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "namePrefix"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("readManifests: %v, want an error containing %q", err, want)
		}
	}
}

// TestRepoFactsRefuse: the readers of the repository's files fail, naming
// what they looked for, when the file no longer says it.
func TestRepoFactsRefuse(t *testing.T) {
	if _, err := settingsFromUsage("Usage: inventory-server [flags]\n"); err == nil {
		t.Error("settingsFromUsage accepted a -h without a table")
	}
	if _, err := settingsFromUsage("  FLAG  ENVIRONMENT  DEFAULT  MEANING\n  -addr  ADDR\n"); err == nil {
		t.Error("settingsFromUsage accepted a row without four columns")
	}
	got, err := settingsFromUsage("  FLAG   ENVIRONMENT  DEFAULT             MEANING\n  -seed  -            the demo inventory  seed\n  -      REDIS_URL    none: required      the Redis\n\nExit status")
	if err != nil || len(got) != 1 || got["REDIS_URL"] != "none: required" {
		t.Errorf("settingsFromUsage: %v, %v; want REDIS_URL's default alone", got, err)
	}
	if _, _, _, err := imageFacts("FROM scratch\nUSER root\n"); err == nil {
		t.Error("imageFacts accepted a script without the image's name and numeric user")
	}
	if _, err := moduleVersion([]byte("module-sets: {a: {version: v1.0.0, modules: [x]}}\n"), serverModule); err == nil {
		t.Error("moduleVersion found a module versions.yaml does not release")
	}
	if _, err := failoverWindow("A failover costs a few seconds."); err == nil {
		t.Error("failoverWindow read a window from a text that states none")
	}
	for _, text := range []string{
		"(`down-after-milliseconds`, typically 5–30 s in production) plus well under a second:",
		"(`down-after-milliseconds`, typically 5–30 s in\nproduction) plus well under a second:", // reflowed
	} {
		if n, err := failoverWindow(text); err != nil || n != 31 {
			t.Errorf("failoverWindow(%q): %d, %v; want 31", text, n, err)
		}
	}
}
