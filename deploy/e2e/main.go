// Command e2e installs the gated Helm chart into a real Kubernetes API
// server and checks that every object landed as rendered.
//
// It starts etcd and kube-apiserver (built from the Go module proxy by `make
// helm-e2e`) on 127.0.0.1, registers the ServiceMonitor CRD, runs `helm
// install` with the given values, plays the part of the absent Job
// controller for the migration hook (marks it complete, so helm proceeds to
// the release's objects as it would in a cluster), compares each rendered
// object, hooks included, with what the API server stored, uninstalls, checks
// the release's objects are gone, and tears everything down.
//
// No kubelet or controller-manager runs: this proves the API server accepts
// and stores the chart (schema, defaulting, admission, hook ordering), not
// that pods start.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

const (
	release   = "gated"
	namespace = "gated-e2e"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "helm-e2e: FAIL:", err)
		os.Exit(1)
	}
}

type config struct {
	bin, helm, chart, values, crd string
	wantKinds                     []string
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("e2e", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.bin, "bin", "", "directory holding kube-apiserver and etcd")
	fs.StringVar(&c.helm, "helm", "helm", "helm binary")
	fs.StringVar(&c.chart, "chart", "", "chart directory")
	fs.StringVar(&c.values, "values", "", "values file to install with")
	fs.StringVar(&c.crd, "crd", "", "ServiceMonitor CRD manifest")
	kinds := fs.String("want-kinds", "", "comma-separated kinds the release must contain")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.bin == "" || c.chart == "" || c.values == "" || c.crd == "" {
		return errors.New("-bin, -chart, -values and -crd are required")
	}
	if *kinds != "" {
		c.wantKinds = strings.Split(*kinds, ",")
	}

	work, err := os.MkdirTemp("", "gated-helm-e2e-")
	if err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	defer os.RemoveAll(work)

	cl, stopCluster, err := startCluster(ctx, c.bin, work, out)
	if err != nil {
		return err
	}
	defer stopCluster()
	return installAndCheck(ctx, c, cl, work, out)
}

// cluster is a running API server and the clients to reach it.
type cluster struct {
	kubeconfig string
	dyn        dynamic.Interface
	mapper     *restmapper.DeferredDiscoveryRESTMapper
}

func startCluster(ctx context.Context, bin, work string, out io.Writer) (*cluster, func(), error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, nil, err
	}
	etcdClient := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	etcdPeer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	apiURL := fmt.Sprintf("https://127.0.0.1:%d", ports[2])

	var procs []*exec.Cmd
	stop := func() {
		// Reverse order: the API server goes before its storage.
		for i := len(procs) - 1; i >= 0; i-- {
			p := procs[i]
			_ = p.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = p.Process.Kill()
				<-done
			}
		}
		fmt.Fprintln(out, "torn down etcd and kube-apiserver")
	}

	etcd, err := start(filepath.Join(bin, "etcd"), filepath.Join(work, "etcd.log"),
		"--name=e2e", "--data-dir="+filepath.Join(work, "etcd"),
		"--listen-client-urls="+etcdClient, "--advertise-client-urls="+etcdClient,
		"--listen-peer-urls="+etcdPeer, "--initial-advertise-peer-urls="+etcdPeer,
		"--initial-cluster=e2e="+etcdPeer, "--log-level=warn")
	if err != nil {
		return nil, nil, err
	}
	procs = append(procs, etcd)
	if err := waitHTTP(ctx, http.DefaultClient, etcdClient+"/health", "", 60*time.Second, filepath.Join(work, "etcd.log")); err != nil {
		stop()
		return nil, nil, fmt.Errorf("etcd: %w", err)
	}
	fmt.Fprintln(out, "etcd up on", etcdClient)

	token, err := writeAuth(work)
	if err != nil {
		stop()
		return nil, nil, err
	}
	api, err := start(filepath.Join(bin, "kube-apiserver"), filepath.Join(work, "kube-apiserver.log"),
		"--etcd-servers="+etcdClient,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[2]),
		"--cert-dir="+filepath.Join(work, "certs"),
		"--token-auth-file="+filepath.Join(work, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(work, "sa.key"),
		"--service-account-signing-key-file="+filepath.Join(work, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--enable-priority-and-fairness=false")
	if err != nil {
		stop()
		return nil, nil, err
	}
	procs = append(procs, api)
	// The API server makes its own self-signed serving certificate; this
	// client only ever talks to 127.0.0.1.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if err := waitHTTP(ctx, insecure, apiURL+"/readyz", token, 3*time.Minute, filepath.Join(work, "kube-apiserver.log")); err != nil {
		stop()
		return nil, nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	fmt.Fprintln(out, "kube-apiserver up on", apiURL)

	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin}}]
current-context: e2e
`, apiURL, token), 0o600); err != nil {
		stop()
		return nil, nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	rc := &rest.Config{Host: apiURL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	return &cluster{kubeconfig: kubeconfig, dyn: dyn, mapper: mapper}, stop, nil
}

func start(bin, logFile string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(logFile)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	return cmd, nil
}

// writeAuth writes the service-account signing key and a static token file
// whose only user is in system:masters.
func writeAuth(work string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", fmt.Errorf("service-account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("service-account key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(work, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", fmt.Errorf("write service-account key: %w", err)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	token := hex.EncodeToString(b)
	if err := os.WriteFile(filepath.Join(work, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token file: %w", err)
	}
	return token, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func waitHTTP(ctx context.Context, c *http.Client, url, token string, timeout time.Duration, logFile string) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	tail, _ := os.ReadFile(logFile)
	if len(tail) > 4000 {
		tail = tail[len(tail)-4000:]
	}
	return fmt.Errorf("%s not ready after %s (%s); log tail:\n%s", url, timeout, last, tail)
}

func installAndCheck(ctx context.Context, c config, cl *cluster, work string, out io.Writer) error {
	if err := installCRD(ctx, cl, c.crd); err != nil {
		return err
	}
	fmt.Fprintln(out, "ServiceMonitor CRD established")

	helm := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, c.helm, append(args, "--kubeconfig", cl.kubeconfig, "-n", namespace)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("helm %s: %w: %s", args[0], err, stderr.String())
		}
		return b, nil
	}

	// helm install blocks on the migration hook Job; complete it meanwhile.
	jobCtx, cancelJob := context.WithCancel(ctx)
	jobDone := make(chan error, 1)
	go func() { jobDone <- completeHookJobs(jobCtx, cl, out) }()
	_, err := helm("install", release, c.chart, "--create-namespace", "-f", c.values, "--timeout", "3m")
	cancelJob()
	if jobErr := <-jobDone; jobErr != nil && !errors.Is(jobErr, context.Canceled) {
		return jobErr
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "helm install succeeded")

	manifest, err := helm("get", "manifest", release)
	if err != nil {
		return err
	}
	hooks, err := helm("get", "hooks", release)
	if err != nil {
		return err
	}
	objs, err := decode(manifest)
	if err != nil {
		return fmt.Errorf("release manifest: %w", err)
	}
	hookObjs, err := decode(hooks)
	if err != nil {
		return fmt.Errorf("release hooks: %w", err)
	}
	if err := checkKinds(append(append([]*unstructured.Unstructured{}, objs...), hookObjs...), c.wantKinds); err != nil {
		return err
	}
	for _, o := range append(append([]*unstructured.Unstructured{}, objs...), hookObjs...) {
		if err := checkStored(ctx, cl, o); err != nil {
			return err
		}
		fmt.Fprintf(out, "stored as rendered: %s %s\n", o.GetKind(), o.GetName())
	}

	if _, err := helm("uninstall", release, "--timeout", "2m"); err != nil {
		return err
	}
	for _, o := range objs {
		if err := checkGone(ctx, cl, o); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "helm uninstall removed all %d release objects\nPASS: %d objects (%d hooks) created as rendered\n",
		len(objs), len(objs)+len(hookObjs), len(hookObjs))
	return nil
}

func installCRD(ctx context.Context, cl *cluster, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read CRD: %w", err)
	}
	crds, err := decode(b)
	if err != nil || len(crds) != 1 {
		return fmt.Errorf("CRD manifest %s: want one object: %v", path, err)
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := cl.dyn.Resource(gvr).Create(ctx, crds[0], metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create CRD: %w", err)
	}
	return poll(ctx, time.Minute, "CRD established", func() (bool, error) {
		got, err := cl.dyn.Resource(gvr).Get(ctx, crds[0].GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				cl.mapper.Reset()
				return true, nil
			}
		}
		return false, nil
	})
}

// completeHookJobs marks every Job of the release complete, standing in for
// the Job controller and kubelet this API-server-only cluster lacks.
func completeHookJobs(ctx context.Context, cl *cluster, out io.Writer) error {
	jobs := cl.dyn.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}).Namespace(namespace)
	done := map[string]bool{}
	for {
		list, err := jobs.List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release})
		if err != nil && !apierrors.IsNotFound(err) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("list jobs: %w", err)
		}
		if list != nil {
			for i := range list.Items {
				j := &list.Items[i]
				if done[string(j.GetUID())] {
					continue
				}
				now := time.Now().UTC().Format(time.RFC3339)
				cond := func(t string) map[string]any {
					return map[string]any{"type": t, "status": "True", "reason": "CompletionsReached",
						"message": "marked complete by helm-e2e", "lastProbeTime": now, "lastTransitionTime": now}
				}
				j.Object["status"] = map[string]any{
					"startTime": now, "completionTime": now, "succeeded": int64(1), "active": int64(0), "ready": int64(0),
					"conditions": []any{cond("SuccessCriteriaMet"), cond("Complete")},
				}
				if _, err := jobs.UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					return fmt.Errorf("complete job %s: %w", j.GetName(), err)
				}
				done[string(j.GetUID())] = true
				fmt.Fprintln(out, "hook job completed (standing in for the Job controller):", j.GetName())
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func decode(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

func checkKinds(objs []*unstructured.Unstructured, want []string) error {
	have := map[string]int{}
	for _, o := range objs {
		have[o.GetKind()]++
	}
	var missing []string
	for _, k := range want {
		if have[k] == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("release lacks kinds %v (has %v)", missing, have)
	}
	return nil
}

func resourceFor(cl *cluster, o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	m, err := cl.mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", o.GroupVersionKind(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := o.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		return cl.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return cl.dyn.Resource(m.Resource), nil
}

// checkStored fetches the stored object and requires every rendered field
// to be there with the same value; the server may add defaults.
func checkStored(ctx context.Context, cl *cluster, rendered *unstructured.Unstructured) error {
	ri, err := resourceFor(cl, rendered)
	if err != nil {
		return err
	}
	live, err := ri.Get(ctx, rendered.GetName(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s %s was not created: %w", rendered.GetKind(), rendered.GetName(), err)
	}
	want, err := normalise(rendered.Object)
	if err != nil {
		return err
	}
	if rendered.GetKind() == "Secret" {
		stringDataToData(want)
	}
	got, err := normalise(live.Object)
	if err != nil {
		return err
	}
	var diffs []string
	subset(want, got, rendered.GetKind()+" "+rendered.GetName(), &diffs)
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("stored object differs from the rendered one:\n  %s", strings.Join(diffs, "\n  "))
	}
	return nil
}

// normalise round-trips through JSON so numbers compare as float64 on both sides.
func normalise(o map[string]any) (map[string]any, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// stringDataToData mirrors what the API server does with a Secret's stringData.
func stringDataToData(o map[string]any) {
	sd, ok := o["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := o["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		s, _ := v.(string)
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	o["data"] = data
	delete(o, "stringData")
}

func subset(want, got any, path string, diffs *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		if len(w) == 0 {
			return // an empty rendered map is the same as an absent one
		}
		if g == nil {
			*diffs = append(*diffs, fmt.Sprintf("%s: missing", path))
			return
		}
		for k, v := range w {
			subset(v, g[k], path+"."+k, diffs)
		}
	case []any:
		g, _ := got.([]any)
		if len(w) != len(g) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %d items rendered, %d stored", path, len(w), len(g)))
			return
		}
		for i := range w {
			subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), diffs)
		}
	default:
		if !reflect.DeepEqual(want, got) {
			*diffs = append(*diffs, fmt.Sprintf("%s: rendered %v, stored %v", path, want, got))
		}
	}
}

func checkGone(ctx context.Context, cl *cluster, o *unstructured.Unstructured) error {
	ri, err := resourceFor(cl, o)
	if err != nil {
		return err
	}
	return poll(ctx, 30*time.Second, o.GetKind()+" "+o.GetName()+" deleted", func() (bool, error) {
		_, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func poll(ctx context.Context, timeout time.Duration, what string, f func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := f()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %s (last error: %v)", what, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}
