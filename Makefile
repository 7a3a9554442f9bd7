# brid build.
#   make                 build brictl (and brid) into build/bin
#   make check           install dependencies, build, run unit + interop tests
#   make check SANITIZE=1  the same under ASan+UBSan (separate build-san/ tree)
#   make reliability     the full crash matrices, a 10-minute soak (SOAK_SECONDS) and
#                        compaction under a busy writer for 60 s per case (BUSY_SECONDS)
#   make powerloss       the power-loss harness (tests/powerloss): every workload's
#                        crash states checked; CANARY=1 arms the canary (a put
#                        skips its directory fsync: violations must show)
#   make fuzz            build libFuzzer harnesses with clang and run each
#                        FUZZ_SECONDS (default 60) on a copy of its seed corpus
#   make fuzz-smoke      the same, 5 s each (FUZZ_SMOKE_SECONDS): what CI runs
#   make demo            compact a demo table (see README)
#   make deb             the Debian package build/deb/brid_VERSION_amd64.deb (docs/deploy.md)
#   make install         the same files by hand (PREFIX, DESTDIR; see below)

VERSION  := 0.1.0
SANITIZE ?=
FUZZ     ?=
BUILD    := build$(if $(SANITIZE),-san)$(if $(FUZZ),-fuzz)
CC       ?= cc
ifneq ($(FUZZ),)
CC       := clang
endif
PKGS     := libprotobuf-c jansson libzstd liblz4 libcrypto sqlite3 libcurl expat
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) libpq 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lroaring -lm

SAN_FLAGS := -fsanitize=address,undefined
OPT      := -O2
LDFLAGS_ALL :=
ifneq ($(SANITIZE),)
OPT      := -O1 $(SAN_FLAGS) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_ALL := $(SAN_FLAGS)
endif
ifneq ($(FUZZ),)
OPT      := -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS_ALL := -fsanitize=fuzzer,address,undefined
endif
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -DBRI_VERSION='"$(VERSION)"' -g $(OPT) -Iinclude -Ilib -Idaemon -I$(BUILD)/gen $(PKG_CFLAGS) -MMD -MP
# CPPFLAGS, CFLAGS and LDFLAGS are the caller's (debian/rules passes
# dpkg-buildflags' hardening flags through them), added to brid's own.
CPPFLAGS ?=
CFLAGS   ?=
LDFLAGS  ?=
WARN     := -Wall -Wextra -Werror -Wshadow -Wvla

PROTOS   := $(shell find proto -name '*.proto' | sort)
GEN_C    := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
GEN_H    := $(GEN_C:.c=.h)
LIB_SRC  := $(shell find lib -name '*.c' | sort)
LIB_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(GEN_C:.c=.o)
LIBBRI   := $(BUILD)/libbri.a

# The programs' rooms: daemon/brictl (the CLI: offline commands + the
# daemon's client), daemon/brid (the daemon), daemon/rpc (the JSON-RPC framing
# and the job kinds both speak), daemon/jobs (brid's job store, also linked
# into the unit tests that drive it).
RPC_SRC    := $(wildcard daemon/rpc/*.c)
JOBS_SRC   := $(wildcard daemon/jobs/*.c)
JOBS_OBJ   := $(patsubst %.c,$(BUILD)/obj/%.o,$(JOBS_SRC) daemon/rpc/rpc_kinds.c)
LIBJOBS    := $(BUILD)/libbrijobs.a
# The job store's PostgreSQL backend (daemon/jobs/pg.c) speaks libpq (its
# headers are in PKG_CFLAGS).
JOBS_LIBS   := $(shell pkg-config --libs libpq 2>/dev/null)
BRICTL_SRC := $(wildcard daemon/brictl/*.c) $(RPC_SRC)
BRICTL_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(BRICTL_SRC))
BRICTL     := $(BUILD)/bin/brictl
BRID_SRC   := $(shell find daemon/brid -name '*.c' | sort) $(RPC_SRC) $(JOBS_SRC)
BRID_OBJ   := $(patsubst %.c,$(BUILD)/obj/%.o,$(BRID_SRC))
BRID       := $(BUILD)/bin/brid
DAEMON_PKGS := libuv libsystemd libmicrohttpd
DAEMON_LIBS   := $(shell pkg-config --libs $(DAEMON_PKGS) 2>/dev/null) -pthread

TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_HELPER_OBJ := $(BUILD)/obj/tests/unit/testutil.o

FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

# Generated sources and objects are kept (not deleted as intermediates).
.SECONDARY:

.PHONY: all deps check unit interop fuzz fuzz-smoke fuzzers demo clean install deb reliability powerloss
PLSHIM   := $(BUILD)/powerloss/plshim.so
all: $(BRICTL) $(BRID) $(PLSHIM)

# The power-loss harness's recorder, preloaded into brictl and brid (never
# built with the sanitizers: an ASan process refuses a preload before its
# runtime; the harness runs in the plain build).
$(PLSHIM): tests/powerloss/plshim.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fPIC -shared $(WARN) -o $@ $< -ldl -pthread

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen
	protoc-c -Iproto --c_out=$(BUILD)/gen $<

# Generated code is compiled without -Werror: its warnings are not ours to fix.
$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c | $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(LIBBRI): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# A job store backend's SQL (daemon/jobs/schema_NAME.sql) is built in as
# the string SCHEMA_NAME.
$(BUILD)/gen/jobs/%.sql.h: daemon/jobs/%.sql scripts/embed-text.sh
	@mkdir -p $(dir $@)
	scripts/embed-text.sh "$$(echo '$*' | tr a-z A-Z)" $< >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/daemon/jobs/sqlite.o $(BUILD)/obj/tests/unit/test_jobs.o: $(BUILD)/gen/jobs/schema_sqlite.sql.h
$(BUILD)/obj/daemon/jobs/pg.o: $(BUILD)/gen/jobs/schema_pg.sql.h

$(LIBJOBS): $(JOBS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BRICTL): $(BRICTL_OBJ) $(LIBBRI)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) $(LDFLAGS) -o $@ $(BRICTL_OBJ) $(LIBBRI) $(PKG_LIBS)

$(BUILD)/bin/brid: $(BRID_OBJ) $(LIBBRI)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) $(LDFLAGS) -o $@ $(BRID_OBJ) $(LIBBRI) $(PKG_LIBS) $(DAEMON_LIBS) $(JOBS_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(TEST_HELPER_OBJ) $(LIBJOBS) $(LIBBRI)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) $(LDFLAGS) -o $@ $< $(TEST_HELPER_OBJ) $(LIBJOBS) $(LIBBRI) $(PKG_LIBS) $(JOBS_LIBS) $(shell pkg-config --libs check) -pthread

# Harnesses of daemon code (fuzz_config, fuzz_request) link brid's modules
# from an archive of every brid object but main's (brid.c holds main alone,
# scripts/check-layers.sh): the linker takes what each harness needs, so a new
# dependency between brid's modules needs no list kept by hand here.
BRID_LIB := $(BUILD)/libbrid.a
$(BRID_LIB): $(filter-out $(BUILD)/obj/daemon/brid/brid.o,$(BRID_OBJ))
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fuzz/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BRID_LIB) $(LIBBRI)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) $(LDFLAGS) -o $@ $< $(BRID_LIB) $(LIBBRI) $(PKG_LIBS) $(DAEMON_LIBS) $(JOBS_LIBS)

fuzzers: $(FUZZ_BIN)

deps:
	@scripts/deps.sh

check: deps
	@scripts/check-layers.sh
	@scripts/check-storage.sh
	@$(MAKE) --no-print-directory -j$$(nproc) all $(TEST_BIN)
	@BRI_TEST_ONCE=$(if $(SANITIZE),0,1) scripts/run-tests.sh $(BUILD)

unit: all $(TEST_BIN)
	@scripts/run-tests.sh $(BUILD) unit

interop: all
	@scripts/run-tests.sh $(BUILD) interop

# The full crash matrices (every failpoint, every action; through brictl and
# through brid) and a 10-minute soak; make check runs the fast subsets
# (tests/interop/test_crash_matrix.sh, tests/integration/test_daemon_crash_matrix.sh,
# tests/interop/test_soak.sh).
reliability: deps
	@$(MAKE) --no-print-directory all
	@BRI_SOURCE_DIR=$(CURDIR) BRI_BUILD=$(CURDIR)/$(BUILD) BRICTL=$(CURDIR)/$(BUILD)/bin/brictl \
	  ORACLE_NODE_DIR=$(CURDIR)/.deps/node LANCEDB_LOG=error bash tests/reliability/crash_matrix.sh
	@BRI_SOURCE_DIR=$(CURDIR) BRI_BUILD=$(CURDIR)/$(BUILD) BRICTL=$(CURDIR)/$(BUILD)/bin/brictl \
	  ORACLE_NODE_DIR=$(CURDIR)/.deps/node LANCEDB_LOG=error bash tests/reliability/brid_matrix.sh
	@BRI_SOURCE_DIR=$(CURDIR) BRI_BUILD=$(CURDIR)/$(BUILD) BRICTL=$(CURDIR)/$(BUILD)/bin/brictl \
	  ORACLE_NODE_DIR=$(CURDIR)/.deps/node LANCEDB_LOG=error bash tests/reliability/soak.sh $(or $(SOAK_SECONDS),600)
	@BRI_SOURCE_DIR=$(CURDIR) BRI_BUILD=$(CURDIR)/$(BUILD) BRICTL=$(CURDIR)/$(BUILD)/bin/brictl \
	  ORACLE_NODE_DIR=$(CURDIR)/.deps/node LANCEDB_LOG=error SECONDS_RUN=$(or $(BUSY_SECONDS),60) \
	  bash tests/interop/test_compact_concurrent.sh

# make powerloss: every workload (docs/reliability.md "Power loss"), at most
# PL_MAX_STATES crash states each; CANARY=1 arms the canary switch.
powerloss: deps
	@$(MAKE) --no-print-directory all
	@BRI_SOURCE_DIR=$(CURDIR) BRI_BUILD=$(CURDIR)/$(BUILD) BRICTL=$(CURDIR)/$(BUILD)/bin/brictl \
	  ORACLE_NODE_DIR=$(CURDIR)/.deps/node LANCEDB_LOG=error \
	  bash tests/powerloss/run.sh $(if $(CANARY),--canary)

fuzz: deps
	@$(MAKE) --no-print-directory FUZZ=1 fuzzers
	@scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

# What CI runs once (.ci/run): every harness built with clang, then each run
# FUZZ_SMOKE_SECONDS (default 5) on a copy of its seed corpus.
fuzz-smoke: deps
	@$(MAKE) --no-print-directory -j$$(nproc) FUZZ=1 fuzzers
	@scripts/fuzz.sh build-fuzz $(or $(FUZZ_SMOKE_SECONDS),5)

demo:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

# make install PREFIX=/usr DESTDIR=pkgroot: binaries, their man pages
# (docs/man), brictl's bash completion (generated by the brictl just built),
# the unit (ExecStart rewritten to BINDIR), sysusers/tmpfiles snippets, the
# example configuration, and /etc/brid/brid.conf unless one exists: the
# example with its first root, /srv/lance, set (the tmpfiles snippet makes
# that directory, group brid, setgid), so that brid starts as installed
# (docs/deploy.md). brid.conf is 0644: it holds no secret, and the unit's
# User=brid must read it (a root-only file stops the service with exit
# status 78).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
DOCDIR  ?= $(PREFIX)/share/doc/brid
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
install: all
	install -Dm755 $(BUILD)/bin/brid $(DESTDIR)$(BINDIR)/brid
	install -Dm755 $(BUILD)/bin/brictl $(DESTDIR)$(BINDIR)/brictl
	install -Dm644 docs/man/brictl.1 $(DESTDIR)$(MANDIR)/man1/brictl.1
	install -Dm644 docs/man/brid.8 $(DESTDIR)$(MANDIR)/man8/brid.8
	install -Dm644 docs/man/brid.conf.5 $(DESTDIR)$(MANDIR)/man5/brid.conf.5
	mkdir -p $(DESTDIR)$(BASHCOMPDIR)
	$(BUILD)/bin/brictl completion bash >$(DESTDIR)$(BASHCOMPDIR)/brictl
	install -Dm644 config/brid.conf.example $(DESTDIR)$(DOCDIR)/brid.conf.example
	[ -e $(DESTDIR)$(SYSCONFDIR)/brid/brid.conf ] || { mkdir -p $(DESTDIR)$(SYSCONFDIR)/brid && \
	  sed 's|^#root = /srv/lance$$|root = /srv/lance|' config/brid.conf.example >$(DESTDIR)$(SYSCONFDIR)/brid/brid.conf && \
	  chmod 0644 $(DESTDIR)$(SYSCONFDIR)/brid/brid.conf; }
	mkdir -p $(DESTDIR)$(UNITDIR)
	sed 's#/usr/local/bin/brid#$(BINDIR)/brid#' systemd/brid.service >$(DESTDIR)$(UNITDIR)/brid.service
	install -Dm644 systemd/brid.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/brid.conf
	install -Dm644 systemd/brid.tmpfiles $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/brid.conf

# make deb: build/deb/brid_$(VERSION)_amd64.deb (and its .changes and
# .buildinfo), built by dpkg-buildpackage -us -uc -b from a copy of the source
# tree in build/deb/src (so that nothing of the package build lands in the
# tree or its parent), then checked by lintian (debian/brid.lintian-overrides
# says why each remaining tag is there). Build dependencies: scripts/deps.sh.
DEB_DIR := build/deb
deb: deps
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src/brid-$(VERSION)
	tar -c --exclude=./build --exclude='./build-*' --exclude=./.deps --exclude=./.git --exclude=./tests/fuzz/*-out . | \
	  tar -x -C $(DEB_DIR)/src/brid-$(VERSION)
	cd $(DEB_DIR)/src/brid-$(VERSION) && env -u MAKEFLAGS -u MAKELEVEL dpkg-buildpackage -us -uc -b >../../build.log 2>&1 || \
	  { tail -40 $(DEB_DIR)/build.log; exit 1; }
	mv $(DEB_DIR)/src/*.deb $(DEB_DIR)/src/*.changes $(DEB_DIR)/src/*.buildinfo $(DEB_DIR)/
	rm -rf $(DEB_DIR)/src
	lintian --fail-on error,warning $(DEB_DIR)/brid_$(VERSION)_*.changes
	@ls -l $(DEB_DIR)/brid_$(VERSION)_amd64.deb

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
