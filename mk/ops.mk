# Operations checks, in `make test-e2e` (building helm from source and
# fetching Kubernetes' OpenAPI documents would double a cold `make test`): the
# Helm chart's lint and values schema, and rendering with three value sets
# validated strictly offline against Kubernetes' own OpenAPI documents; and
# `make helm-e2e` against a real kube-apiserver.
# Tools are pinned here and installed with `go install` into .bin/.

OPS_BIN := $(CURDIR)/.bin
HELM_VERSION := v3.22.0
KUBECONFORM_VERSION := v0.8.0
# The Kubernetes release the chart is validated against and helm-e2e runs;
# keep in step with deploy/e2e/go.mod.
K8S_VERSION := 1.36.3
PROMETHEUS_OPERATOR_VERSION := v0.85.0

HELM := $(OPS_BIN)/helm-$(HELM_VERSION)
KUBECONFORM := $(OPS_BIN)/kubeconform-$(KUBECONFORM_VERSION)
KUBE_SCHEMAS := $(OPS_BIN)/kube-schemas-$(K8S_VERSION)
CHART := deploy/helm/gated
CHART_VALUES := defaults production existing-secrets
RENDERED := $(OPS_BIN)/helm-rendered
SERVICEMONITOR_CRD = $(call moddir,github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_VERSION))/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml

# moddir downloads a module through the Go module proxy (from outside gated's
# module, so go.mod and go.sum stay untouched) and prints its directory.
moddir = $(shell cd $$(mktemp -d) && $(GO) mod download -json $(1) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p')

.PHONY: helm-check helm-lint helm-render helm-validate helm-schema-rejects helm-e2e test-e2e

## helm-check: lint the chart and check its values schema (part of make test-e2e).
helm-check: helm-lint helm-schema-rejects

## test-e2e: the slow suites CI also runs: the chart's lint and values schema,
## and every rendering of it validated strictly against Kubernetes' own
## OpenAPI documents (which come with the ~900 MB k8s.io/kubernetes module);
## the console in headless Chromium (mk/browser.mk) and the HTTP harness's
## smoke (mk/bench.mk).
test-e2e: helm-check helm-validate

$(HELM):
	GOBIN=$(OPS_BIN)/tmp-helm $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv $(OPS_BIN)/tmp-helm/helm $@ && rmdir $(OPS_BIN)/tmp-helm

$(KUBECONFORM):
	GOBIN=$(OPS_BIN)/tmp-kubeconform $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)
	mv $(OPS_BIN)/tmp-kubeconform/kubeconform $@ && rmdir $(OPS_BIN)/tmp-kubeconform

# Schemas come from k8s.io/kubernetes' api/openapi-spec/v3 and the Prometheus
# Operator's ServiceMonitor CRD, both fetched as Go modules.
$(KUBE_SCHEMAS)/.done: deploy/kubeschema/main.go
	rm -rf $(KUBE_SCHEMAS)
	$(GO) run ./deploy/kubeschema -out $(KUBE_SCHEMAS) \
		-openapi $(call moddir,k8s.io/kubernetes@v$(K8S_VERSION))/api/openapi-spec/v3 \
		-crd $(SERVICEMONITOR_CRD)
	touch $@

helm-lint: $(HELM)
	@for v in $(CHART_VALUES); do \
		echo "helm lint ($$v)"; \
		out=$$($(HELM) lint --strict --quiet $(CHART) --kube-version $(K8S_VERSION) \
			-f $(CHART)/ci/$$v-values.yaml 2>&1) || { echo "$$out"; exit 1; }; \
	done

helm-render: $(HELM)
	@mkdir -p $(RENDERED)
	@for v in $(CHART_VALUES); do \
		$(HELM) template gated $(CHART) --namespace gated --kube-version $(K8S_VERSION) \
			-f $(CHART)/ci/$$v-values.yaml > $(RENDERED)/$$v.yaml 2> $(RENDERED)/$$v.err \
			|| { cat $(RENDERED)/$$v.err; exit 1; }; \
	done

helm-validate: helm-render $(KUBECONFORM) $(KUBE_SCHEMAS)/.done
	$(KUBECONFORM) -strict -summary -output text \
		-schema-location '$(KUBE_SCHEMAS)/{{ .ResourceKind }}{{ .KindSuffix }}.json' \
		$(addprefix $(RENDERED)/,$(addsuffix .yaml,$(CHART_VALUES)))

# values.schema.json must turn bad values into a clear error, not a manifest.
helm-schema-rejects: $(HELM)
	@for bad in 'image.pullPolicy=Sometimes' 'replicaCount=-1' 'logLevel=loud' 'sevice.port=80' \
			'service.port=0' 'serviceMonitor.interval=often' 'catalog.files.a/b=x' \
			'secrets.auditHMACKey=short' 'secrets.auditSigningKey=not-a-pem' 'audit.signed=yes' 'audit.sealTo=AGE-SECRET-KEY-1QQQ' 'audit.fail=maybe' 'redis.limitsFail=maybe' 'redis.url=localhost:6379'; do \
		if out=$$($(HELM) template gated $(CHART) --kube-version $(K8S_VERSION) \
				-f $(CHART)/ci/defaults-values.yaml --set "$$bad" 2>&1); then \
			echo "values.schema.json accepted $$bad"; exit 1; \
		fi; \
		echo "$$out" | grep -q "don't meet the specifications of the schema" \
			|| { echo "$$bad: not rejected by the schema: $$out"; exit 1; }; \
	done
	@$(HELM) template gated $(CHART) --kube-version $(K8S_VERSION) 2>&1 \
		| grep -q 'secrets.databaseURL is required unless secrets.existingSecret is set' \
		|| { echo "missing secrets were not reported"; exit 1; }
	@$(HELM) template gated $(CHART) --kube-version $(K8S_VERSION) -f $(CHART)/ci/existing-secrets-values.yaml \
			--set redis.existingSecret= --set redis.url=redis://redis:6379 2>&1 \
		| grep -q 'redis.url is kept in the chart' \
		|| { echo "redis.url with secrets.existingSecret was not reported"; exit 1; }
	@$(HELM) template gated $(CHART) --kube-version $(K8S_VERSION) -f $(CHART)/ci/defaults-values.yaml --set audit.signed=true 2>&1 \
		| grep -q 'secrets.auditSigningKey is required when audit.signed is true' \
		|| { echo "audit.signed without secrets.auditSigningKey was not reported"; exit 1; }
	@echo "values.schema.json rejects bad values"

## helm-e2e: install the chart into a real kube-apiserver + etcd built from the
## Go module proxy and check every object was stored as rendered (slow, not in make test).
E2E_BIN := $(OPS_BIN)/e2e
K8S_LDFLAGS := -X k8s.io/component-base/version.gitVersion=v$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(K8S_VERSION))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION)))

helm-e2e: $(HELM)
	cd deploy/e2e && $(GO) build -o $(E2E_BIN)/kube-apiserver -ldflags '$(K8S_LDFLAGS)' k8s.io/kubernetes/cmd/kube-apiserver
	cd deploy/e2e && $(GO) build -o $(E2E_BIN)/etcd go.etcd.io/etcd/server/v3
	cd deploy/e2e && $(GO) test -count=1 . && $(GO) build -o $(E2E_BIN)/helm-e2e .
	$(E2E_BIN)/helm-e2e -bin $(E2E_BIN) -helm $(HELM) -chart $(CHART) \
		-values $(CHART)/ci/production-values.yaml -crd $(SERVICEMONITOR_CRD) \
		-want-kinds Deployment,Service,ServiceAccount,ConfigMap,Secret,Job,HorizontalPodAutoscaler,PodDisruptionBudget,ServiceMonitor,NetworkPolicy
