// Command cadvisor is chainperf's minimal container-metrics exporter.
//
// It embeds the cAdvisor library (github.com/google/cadvisor/lib plus the
// Docker container handler from github.com/google/cadvisor), watches the
// Docker containers of this host, and serves their cgroup counters as
// Prometheus metrics on /metrics. There is no web UI, no REST API, no storage
// back-ends and none of the costly collectors: only CPU, memory, block I/O and
// network counters, refreshed every second so that the counters read at the
// edges of a measurement window are at most ~1 s old.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/google/cadvisor/container/docker"
	"github.com/google/cadvisor/lib/cache/memory"
	"github.com/google/cadvisor/lib/container"
	"github.com/google/cadvisor/lib/fs"
	"github.com/google/cadvisor/lib/fs/overlay"
	"github.com/google/cadvisor/lib/fs/vfs"
	"github.com/google/cadvisor/lib/manager"
	"github.com/google/cadvisor/lib/metrics"
	info "github.com/google/cadvisor/lib/model"
	"github.com/google/cadvisor/lib/utils/sysfs"
)

// Metric groups collected unless --enable_metrics says otherwise. Everything
// else the library offers (percpu, sched, process, tcp/udp/advtcp, hugetlb,
// referenced_memory, memory_numa, cpu_topology, cpuset, pressure, perf_event,
// resctrl, app, cpuLoad, oom_event and disk usage via du) stays off.
const defaultMetricGroups = "cpu,memory,diskIO,network"

var (
	flagListenIP = flag.String("listen_ip", "", "IP address to listen on (empty: all addresses)")
	flagPort     = flag.Int("port", 8080, "TCP port that serves /metrics and /healthz")
	// Same names and meaning as in upstream cAdvisor, so that command lines
	// written for the upstream image keep working.
	flagStoreLabels = flag.Bool("store_container_labels", true,
		"export every Docker label as a container_label_<label> Prometheus label (dots and dashes become _); "+
			"if false, only the labels in --whitelisted_container_labels")
	flagLabelAllowlist = flag.String("whitelisted_container_labels", "",
		"comma-separated Docker labels to export when --store_container_labels=false, "+
			"e.g. com.docker.compose.project,com.docker.compose.service")
	flagCacheAge = flag.Duration("storage_duration", time.Minute,
		"how long samples are kept in the in-memory cache (only the newest one is exported)")
	flagGoMetrics = flag.Bool("self_metrics", true,
		"also export go_* and process_* metrics of this exporter (its own CPU and memory cost)")
	flagVersion = flag.Bool("version", false, "print the cAdvisor library version and exit")

	enabledMetrics  = container.MetricSet{}
	disabledMetrics = container.MetricSet{}
)

// libraryVersions reports the cAdvisor module versions compiled in (from the
// build information, so it always agrees with go.mod).
func libraryVersions() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var out []string
	for _, d := range bi.Deps {
		if d.Path == "github.com/google/cadvisor" || d.Path == "github.com/google/cadvisor/lib" {
			out = append(out, d.Path+"@"+d.Version)
		}
	}
	return strings.Join(out, " ")
}

func init() {
	_ = enabledMetrics.Set(defaultMetricGroups)
	flag.Var(&enabledMetrics, "enable_metrics", fmt.Sprintf(
		"comma-separated metric groups to collect; choices: %s", container.AllMetrics.String()))
	flag.Var(&disabledMetrics, "disable_metrics",
		"comma-separated metric groups to remove from --enable_metrics (same choices)")
}

// setLibraryDefaults changes the defaults of flags that the cAdvisor library
// registers on the global flag set. The command line can still override them.
func setLibraryDefaults() {
	defaults := map[string]string{
		// Refresh every container's counters every second, without the
		// library's back-off for containers whose counters do not change.
		"housekeeping_interval":      "1s",
		"allow_dynamic_housekeeping": "false",
		"max_housekeeping_interval":  "1s",
		// The library waits interval*(1+rand*jitter_factor) between two
		// housekeepings; its default factor 1.0 would mean 1-2 s.
		"jitter_factor": "0.1",
		// Only Docker containers (plus the root cgroup "/" for the host
		// totals); systemd slices and other raw cgroups are skipped.
		"docker_only": "true",
		"v":           "1",
	}
	for name, value := range defaults {
		f := flag.Lookup(name)
		if f == nil {
			klog.Fatalf("cAdvisor library flag %q no longer exists", name)
		}
		if err := f.Value.Set(value); err != nil {
			klog.Fatalf("setting default of --%s: %v", name, err)
		}
		f.DefValue = value
	}
}

// registerPlugins does what cAdvisor's own "install" packages do in their
// init(), limited to what this exporter needs: the Docker container handler,
// and the filesystem plugins used to attribute disk usage when the "disk"
// group is enabled (overlay for overlay2 layers, vfs for ordinary block
// filesystems such as ext4 and xfs).
func registerPlugins() error {
	if err := container.RegisterPlugin("docker", docker.NewPlugin()); err != nil {
		return fmt.Errorf("docker container plugin: %w", err)
	}
	if err := fs.RegisterPlugin("overlay", overlay.NewPlugin()); err != nil {
		return fmt.Errorf("overlay fs plugin: %w", err)
	}
	if err := fs.RegisterPlugin("vfs", vfs.NewPlugin()); err != nil {
		return fmt.Errorf("vfs fs plugin: %w", err)
	}
	return nil
}

func containerLabelsFunc() metrics.ContainerLabelsFunc {
	if *flagStoreLabels {
		return metrics.DefaultContainerLabels
	}
	var allow []string
	for _, l := range strings.Split(*flagLabelAllowlist, ",") {
		if l = strings.TrimSpace(l); l != "" {
			allow = append(allow, l)
		}
	}
	return metrics.BaseContainerLabels(allow)
}

// metricsHandler builds a fresh registry per scrape, as cAdvisor does: the set
// of label names depends on which containers exist at that moment.
func metricsHandler(m manager.Manager, labels metrics.ContainerLabelsFunc, included container.MetricSet) http.Handler {
	machine := metrics.NewPrometheusMachineCollector(m, included)
	var self []prometheus.Collector
	if *flagGoMetrics {
		self = append(self,
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	opts := info.RequestOptions{
		IdType:    info.TypeName,
		Count:     1,    // newest sample only
		Recursive: true, // "/" and every container below it
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(metrics.NewPrometheusCollector(m, labels, included, clock.RealClock{}, opts), machine)
		reg.MustRegister(self...)
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
}

func main() {
	klog.InitFlags(nil)
	setLibraryDefaults()
	flag.Parse()
	defer klog.Flush()

	if *flagVersion {
		fmt.Printf("chainperf cadvisor, built on %s\n", libraryVersions())
		return
	}
	enabledMetrics = enabledMetrics.Difference(disabledMetrics)
	if len(enabledMetrics) == 0 {
		klog.Fatal("--enable_metrics is empty")
	}
	if err := registerPlugins(); err != nil {
		klog.Fatalf("registering plugins: %v", err)
	}
	klog.Infof("chainperf cadvisor on %s; metric groups: %s", libraryVersions(), enabledMetrics.String())

	// housekeeping_interval, allow_dynamic_housekeeping and
	// max_housekeeping_interval are read by the library from the flag set.
	cache := memory.New(*flagCacheAge, nil)
	// The two allow-lists (raw cgroup prefixes kept despite docker_only, and
	// environment variables exported as labels) are empty. The library indexes
	// the first element of the raw prefix list, so it must hold one (empty)
	// entry, the same as strings.Split("", ",") gives.
	noPrefixes := []string{""}
	m, err := manager.New(cache, sysfs.NewRealSysFs(), manager.HousekeepingConfigFlags,
		enabledMetrics, noPrefixes, nil, "", 0)
	if err != nil {
		klog.Fatalf("creating the cAdvisor manager: %v", err)
	}
	if err := m.Start(); err != nil {
		klog.Fatalf("starting the cAdvisor manager: %v", err)
	}

	mux := http.NewServeMux()
	mux.Handle("/metrics", metricsHandler(m, containerLabelsFunc(), enabledMetrics))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("chainperf cadvisor: see /metrics and /healthz\n"))
	})

	addr := net.JoinHostPort(*flagListenIP, strconv.Itoa(*flagPort))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-stop
		klog.Infof("received %v, shutting down", sig)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()

	klog.Infof("serving /metrics and /healthz on %s", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		klog.Fatalf("http server: %v", err)
	}
	if err := m.Stop(); err != nil {
		klog.Errorf("stopping the cAdvisor manager: %v", err)
	}
}
