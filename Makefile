# The developer loop. `make` (make check) is the short lane: formatting,
# vet, module tidiness and the tests that take no more than seconds each
# (go test -short); `make test` is the README's test command, and the
# long suites each have a target of their own. .ci/run runs them all.

.PHONY: check fmt vet tidy lint test test-short size interop python clusters bench ci

check: fmt vet tidy test-short

fmt:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

tidy:
	go mod tidy -diff
	cd cmd/geocompact-beam && go mod tidy -diff

# golangci-lint with .golangci.yml, pinned here and not in go.mod; the
# first run builds it (a few minutes).
GOLANGCI_LINT_VERSION = v2.15.0

lint:
	go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run

test:
	go test ./...

test-short:
	go test -short ./...

# The 80-line function and 800-line file limits (internal/testing/codesize).
size:
	go test ./internal/testing/codesize -count=1

interop:
	interop/run.sh --services

python:
	python/test_wheel.sh

clusters:
	python/spark/test_spark.sh
	python/ray/test_ray.sh

bench:
	interop/bench/run.sh --smoke

ci:
	.ci/run
