package deploycheck

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// overlayDir is the example overlay an operator copies: a namespace, the
// image pinned by digest, tracing on.
var overlayDir = filepath.Join("..", "..", "deploy", "overlays", "example")

// overlayKustomization is the part of a Kustomization the example uses,
// decoded strictly as kustomization is.
type overlayKustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
		Digest  string `json:"digest"`
	} `json:"images"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches"`
}

var digestRef = regexp.MustCompile(`^[^@:]+(:[0-9]+)?(/[^@:]+)*@sha256:[0-9a-f]{64}$`)

// render builds dir with kustomize (the library kubectl apply -k runs)
// and decodes every object it yields strictly: an object of a kind the
// test does not know (a CronJob, a Pod) fails it.
func render(dir string) (*manifests, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	m := &manifests{secrets: map[string]*corev1.Secret{}}
	var errs []error
	for _, r := range res.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		obj, err := decodeObject(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err))
			continue
		}
		if err := m.add(obj); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err))
		}
	}
	return m, errors.Join(errs...)
}

// renderOverlay renders an overlay of deploy/kubernetes, and its seed/
// overlay when it has one, into one manifests: the objects kubectl apply
// -k applies at every change, and the seed Job applied once. The seed's
// objects are in jobs and configMaps, as in readManifests.
func renderOverlay(dir string) (*manifests, error) {
	m, err := render(dir)
	if err != nil {
		return nil, err
	}
	if m.deployment == nil {
		return nil, fmt.Errorf("%s yields no Deployment", dir)
	}
	if errs := checkNoSeed(m, dir); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if _, err := os.Stat(filepath.Join(dir, seedDir)); err != nil {
		return m, nil
	}
	seed, err := render(filepath.Join(dir, seedDir))
	if err != nil {
		return nil, err
	}
	if seed.deployment != nil || len(seed.services)+len(seed.pdbs)+len(seed.policies)+len(seed.serviceAccounts) > 0 {
		return nil, fmt.Errorf("%s/%s yields more than the seed Job and its ConfigMap", dir, seedDir)
	}
	m.jobs, m.configMaps = seed.jobs, seed.configMaps
	return m, nil
}

// checkNoSeed reports what, in the objects kubectl apply -k applies from
// a directory at every change (rendered into m), would initialize the
// store: a Job (any Job: the decoder knows no other kind that runs a
// pod but the Deployment), or a container of the Deployment given -seed,
// -init-only, INVENTORY_SEED or INVENTORY_INIT_ONLY. Applied again after
// a wipe, such an object writes the initial stock back and every pod
// serves it as the truth; initializing is an act of its own (seed/).
func checkNoSeed(m *manifests, dir string) []error {
	var errs []error
	for _, j := range m.jobs {
		errs = append(errs, fmt.Errorf("kubectl apply -k %s applies Job %s: once it is gone (ttlSecondsAfterFinished, or deleted), any later apply runs it again, after a wipe too; keep it in %s/", dir, j.Name, seedDir))
	}
	if m.deployment == nil {
		return errs
	}
	pod := m.deployment.Spec.Template.Spec
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		if seedArg(c.Args) != "" || slices.Contains(c.Args, "-init-only") || slices.Contains(c.Args, "--init-only") ||
			slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "INVENTORY_SEED" || e.Name == "INVENTORY_INIT_ONLY" }) {
			errs = append(errs, fmt.Errorf("kubectl apply -k %s: the Deployment's container %s initializes the store (-seed, -init-only, INVENTORY_SEED or INVENTORY_INIT_ONLY): every pod that starts after a wipe would write the initial stock back", dir, c.Name))
		}
	}
	return errs
}

// TestApplyNeverSeeds renders deploy/kubernetes and the example overlay
// as kubectl apply -k does, strictly: neither applies anything that
// initializes the store, so applying them again at any later time, after
// any wipe, cannot write the seed back. The seed directories render to
// the one Job and its ConfigMap. A kustomization that lists the seed
// beside the base is caught.
func TestApplyNeverSeeds(t *testing.T) {
	for _, dir := range []string{deployDir, overlayDir} {
		m, err := render(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.deployment == nil {
			t.Fatalf("%s renders no Deployment", dir)
		}
		for _, err := range checkNoSeed(m, dir) {
			t.Error(err)
		}
		seed, err := render(filepath.Join(dir, seedDir))
		if err != nil {
			t.Fatal(err)
		}
		if len(seed.jobs) != 1 || len(seed.configMaps) != 1 || seed.deployment != nil {
			t.Errorf("%s/%s renders %d Jobs, %d ConfigMaps and a Deployment %v; want the seed Job and its ConfigMap", dir, seedDir, len(seed.jobs), len(seed.configMaps), seed.deployment != nil)
		}
	}

	// Both in one kustomization, as a base that listed its seed did.
	both := t.TempDir()
	abs := func(dir string) string {
		a, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := filepath.Rel(both, a)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s, %s]\n", abs(deployDir), abs(filepath.Join(deployDir, seedDir)))
	if err := os.WriteFile(filepath.Join(both, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := render(both)
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkNoSeed(m, both); len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), "applies Job inventory-seed") {
		t.Errorf("checkNoSeed of a kustomization listing the seed beside the base: %v, want the Job named", errs)
	}
	m.deployment.Spec.Template.Spec.Containers[0].Args = []string{"-init-only", "-seed", "/seed/items.json"}
	if errs := checkNoSeed(m, both); !strings.Contains(errors.Join(errs...).Error(), "initializes the store") {
		t.Errorf("checkNoSeed of a Deployment run with -init-only -seed: %v, want it named", errs)
	}
}

// checkOverlay checks a rendered overlay: every object in namespace,
// every container's image pinned by digest, and, with tracing on, an
// egress rule to the OTLP endpoint's port for the pods.
func checkOverlay(m *manifests, namespace string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if namespace == "" {
		bad("the overlay sets no namespace")
	}
	for what, meta := range m.objectMeta() {
		if meta.Namespace != namespace {
			bad("%s is in namespace %q, want the overlay's %q", what, meta.Namespace, namespace)
		}
	}
	pods := map[string]corev1.PodSpec{"Deployment " + m.deployment.Name: m.deployment.Spec.Template.Spec}
	for _, j := range m.jobs {
		pods["Job "+j.Name] = j.Spec.Template.Spec
	}
	for what, pod := range pods {
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			if !digestRef.MatchString(c.Image) {
				bad("%s: container %s's image %s is not pinned by digest (NAME@sha256:…)", what, c.Name, c.Image)
			}
		}
	}
	c, err := m.container()
	if err != nil {
		return append(errs, err)
	}
	endpoint, _ := containerEnv(c, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint, _ = containerEnv(c, "OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" {
		return errs
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return append(errs, fmt.Errorf("the OTLP endpoint %q is not a URL", endpoint))
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	podLabels := labels.Set(m.deployment.Spec.Template.Labels)
	open := false
	for _, np := range m.policies {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !sel.Matches(podLabels) {
			continue
		}
		for _, r := range np.Spec.Egress {
			if len(r.To) > 0 && slices.ContainsFunc(r.Ports, func(p networkingv1.NetworkPolicyPort) bool { return p.Port != nil && p.Port.String() == port }) {
				open = true
			}
		}
	}
	if !open {
		bad("tracing is on (OTLP endpoint %s) but no NetworkPolicy lets the pods out to port %s with a to:", endpoint, port)
	}
	return errs
}

// TestOverlay builds the example overlay as kubectl apply -k would,
// decodes what it yields strictly, and checks it: its own files, the
// namespace, the digests, the OTLP egress, and the review's checks of the
// base still hold after its changes.
func TestOverlay(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(overlayDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k overlayKustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("%s: %v", filepath.Join(overlayDir, "kustomization.yaml"), err)
	}
	for _, p := range k.Patches {
		patch, err := os.ReadFile(filepath.Join(overlayDir, p.Path))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeObject(patch); err != nil {
			t.Errorf("patch %s: %v", p.Path, err)
		}
	}
	f := repoFacts(t)
	if !slices.ContainsFunc(k.Images, func(i struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
		Digest  string `json:"digest"`
	}) bool {
		return i.Name == f.image && strings.HasPrefix(i.Digest, "sha256:") && i.NewTag == ""
	}) {
		t.Errorf("the overlay's images do not pin %s by digest", f.image)
	}
	m, err := renderOverlay(overlayDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkOverlay(m, k.Namespace) {
		t.Error(err)
	}
	if sj, err := m.seedJob(); err != nil || sj.server.Image != ctr(m).Image {
		t.Errorf("the seed overlay's Job runs %v (%v), the overlay's Deployment %s: pin the same digest in both", sj.server, err, ctr(m).Image)
	}
	m.secrets = readDeploy(t).secrets // created by the operator, in the examples' shape
	for _, err := range append(checkPlatform(m, f), checkSeedJob(m, f)...) {
		t.Error(err)
	}
}

// TestOverlayCatches: checkOverlay refuses a tag, an object outside the
// namespace, and tracing with no way out to the collector.
func TestOverlayCatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(m *manifests)
		wants string
	}{
		{"tag", func(m *manifests) { ctr(m).Image = "registry.example/petinventory/inventory-server:v0.1.0" }, "not pinned by digest"},
		{"Job container tag", func(m *manifests) {
			m.jobs[0].Spec.Template.Spec.Containers[0].Image = "petinventory/inventory-server:v0.1.0"
		}, "Job inventory-seed: container inventory-server's image"},
		{"namespace", func(m *manifests) { m.services[0].Namespace = "default" }, `in namespace "default"`},
		{"OTLP closed", func(m *manifests) {
			m.policies = slices.DeleteFunc(m.policies, func(np *networkingv1.NetworkPolicy) bool { return np.Name == "inventory-server-otlp" })
		}, "no NetworkPolicy lets the pods out to port 4318"},
		{"OTLP elsewhere", func(m *manifests) { setEnv(m, "OTEL_EXPORTER_OTLP_ENDPOINT", "https://otlp.example") }, "out to port 443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := renderOverlay(overlayDir)
			if err != nil {
				t.Fatal(err)
			}
			if errs := checkOverlay(m, "inventory"); len(errs) > 0 {
				t.Fatalf("the overlay does not pass as it is: %v", errors.Join(errs...))
			}
			tc.edit(m)
			errs := checkOverlay(m, "inventory")
			if len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), tc.wants) {
				t.Errorf("checkOverlay reported %v, want an error containing %q", errs, tc.wants)
			}
		})
	}
}
