# stax - sampling CPU profiler for Linux.
#   make          build ./stax (when a build dependency is missing, it
#                 prints the apt-get install line and stops; it never
#                 installs anything)
#   make run      install missing Debian packages (as root), build, profile
#                 the bundled demo and print where its time went
#   make check    install what the tests use (as root), build and run
#                 every test; last line "N passed, N failed"
#   make bench    measure stax against perf (bench/report.md)
#   make fuzz     run the fuzz targets longer (FUZZ_SECONDS=300; FUZZ_ONLY=NAME for one)
#   make check-sanitize  build stax and the unit tests with AddressSanitizer
#                 and UndefinedBehaviorSanitizer (build-san/) and run every
#                 test against that build
#   make check-arm64  build stax and the test programs for arm64 (cross)
#                 and run the arm64 tests in an arm64 guest (qemu)
#   make test-deps  install what the tests use (make check runs it first)
#   make install / uninstall  PREFIX=/usr/local DESTDIR= BINDIR MANDIR
#   make deb      build a Debian package (build/deb/stax_VERSION_ARCH.deb)
#   make analyze  gcc -fanalyzer and cppcheck over src/
#
# The usual variables work as users and distributions expect: CC, CFLAGS
# (default -O2 -g), CPPFLAGS, LDFLAGS and LDLIBS are the user's, given on
# the command line or in the environment (make CC=clang CFLAGS=-O1); the
# project's own flags are in STAX_CPPFLAGS, STAX_CFLAGS and STAX_LIBS and
# always apply, before the user's (so a user's -O or -std wins).

CC ?= cc
CFLAGS ?= -O2 -g
STAX_CPPFLAGS = -Isrc -D_GNU_SOURCE -MMD -MP
STAX_CFLAGS = -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare
STAX_LIBS = -ldw -lelf -lzstd -lxxhash -lz -llzma -liberty -lbpf -lpthread -ldl -lm
ALL_CPPFLAGS = $(STAX_CPPFLAGS) $(CPPFLAGS)
ALL_CFLAGS = $(STAX_CFLAGS) $(CFLAGS) $(SAN_CFLAGS)
ALL_LIBS = $(STAX_LIBS) $(LDLIBS)
# capstone (annotate) and libmicrohttpd (serve) are opened when used, by
# the names of the libraries their headers come with (Debian 12's names
# in the code when the headers are not installed yet)
soname = $(shell objdump -p $$($(CC) -print-file-name=lib$(1).so) 2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
CAPSTONE_SONAME := $(call soname,capstone)
MICROHTTPD_SONAME := $(call soname,microhttpd)

# The one version string (scripts/version.sh: VERSION, plus git's
# commit count and hash in a checkout)
VERSION_STRING := $(shell sh scripts/version.sh)

B = build
BIN = stax
# *.bpf.c are BPF programs (the rules below), not stax's own code
SRC := $(shell find src -name '*.c' ! -name '*.bpf.c' | sort)
# the web page (src/serve/page.html and its scripts) becomes C strings
# at build time: $(B)/gen/page.c, compiled with the rest
OBJ := $(SRC:%.c=$(B)/%.o) $(B)/gen/page.o
LIBOBJ := $(filter-out $(B)/src/main.o $(B)/src/cmd/%,$(OBJ))
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/unit/%)

.PHONY: all deps build-deps test-deps run check check-sanitize check-arm64 arm64 bench fuzz clean programs unit FORCE
all: $(BIN)

# plain make only checks (and names the apt-get install line); make run,
# make check and make test-deps install what is missing when root
deps:
	@CC='$(CC)' sh scripts/deps.sh --check

build-deps:
	@sh scripts/deps.sh

test-deps:
	@sh scripts/deps.sh --test

$(BIN): $(OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(ALL_LIBS)

$(B)/src/view/annotate.o: STAX_CPPFLAGS += $(if $(CAPSTONE_SONAME),-DCAPSTONE_SONAME='"$(CAPSTONE_SONAME)"')
$(B)/src/serve/http.o: STAX_CPPFLAGS += $(if $(MICROHTTPD_SONAME),-DMICROHTTPD_SONAME='"$(MICROHTTPD_SONAME)"')
$(B)/src/lib/version.o: STAX_CPPFLAGS += -DSTAX_VERSION='"$(VERSION_STRING)"'
# rewritten only when the version changed, so lib/version.o is rebuilt then
$(B)/src/lib/version.o: $(B)/version
$(B)/version: FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION_STRING)' | cmp -s - $@ || echo '$(VERSION_STRING)' >$@

# The in-kernel reader (src/bpf/, record/moment.c): clang -target bpf
# builds the program with BTF (CO-RE: libbpf relocates it at load against
# the running kernel's BTF, so no vmlinux.h of the build machine's kernel
# is needed), bpftool embeds it in a skeleton header that record/moment.c
# includes. __TARGET_ARCH_ names the target's pt_regs; the multiarch
# include directory has the asm/ headers linux/bpf.h needs.
BPF_CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
BPF_ARCH ?= $(shell $(CC) -dumpmachine | sed 's/-.*//; s/x86_64/x86/; s/aarch64/arm64/')
# (a cross compiler's sysroot holds the target's asm/ headers)
BPF_INCLUDE ?= $(patsubst //%,/%,$(shell $(CC) -print-sysroot 2>/dev/null)/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null))
$(B)/bpf/%.bpf.o: src/bpf/%.bpf.c src/bpf/%_abi.h | deps
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(BPF_INCLUDE) -Isrc/bpf -c -o $@ $<
$(B)/bpf/%.skel.h: $(B)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf >$@.tmp && mv $@.tmp $@
.SECONDARY: $(B)/bpf/moment.bpf.o $(B)/bpf/kread.bpf.o
$(B)/src/record/moment.o: $(B)/bpf/moment.skel.h
$(B)/src/record/moment.o: STAX_CPPFLAGS += -I$(B)/bpf
# the kernel's code for annotate where /proc/kcore is not (symbol/kcode.c)
$(B)/src/symbol/kcode.o: $(B)/bpf/kread.skel.h
$(B)/src/symbol/kcode.o: STAX_CPPFLAGS += -I$(B)/bpf

$(B)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(B)/unit/%: tests/unit/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJ) $(ALL_LIBS)

unit: $(UNIT_BIN)

# the web page is written as HTML and JavaScript and compiled in as
# strings (gen-page.sh); the scripts in this order, one after another
PAGE_JS = src/serve/page-data.js src/serve/page-views.js src/serve/page-timeline.js src/serve/page-source.js src/serve/page-main.js
$(B)/gen/page.c: src/serve/page.html $(PAGE_JS) src/serve/gen-page.sh
	@mkdir -p $(dir $@)
	sh src/serve/gen-page.sh src/serve/page.html $(PAGE_JS) >$@.tmp && mv $@.tmp $@
$(B)/gen/page.o: $(B)/gen/page.c | deps
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

programs:
	@$(MAKE) -s -C tests/programs

run: build-deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) -s -C tests/programs demo
	@echo "== stax record -o demo.data -- tests/programs/build/demo"
	./stax record -o $(B)/demo.data -- tests/programs/build/demo
	@echo; echo "== stax top -i $(B)/demo.data -n 10"
	@./stax top -i $(B)/demo.data -n 10
	@echo; echo "== stax flame -i $(B)/demo.data"
	@./stax flame -i $(B)/demo.data

# test-deps first: the tests never download or install anything
check: test-deps
	@$(MAKE) --no-print-directory all unit programs
	@sh tests/run.sh

# The same build and the whole suite (unit and e2e) with AddressSanitizer
# and UndefinedBehaviorSanitizer, in build-san/ beside the normal build.
# Every sanitizer report fails the test that was running (tests/run.sh
# reads the reports from STAX_SANITIZER_LOGS). LeakSanitizer runs too.
# handle_sigbus=0: SIGBUS stays stax's (lib/elfguard.c turns a fault in
# a file cut short into zeros, and passes any other to the default).
SAN = build-san
SAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
check-sanitize: test-deps
	@$(MAKE) --no-print-directory all programs
	@$(MAKE) --no-print-directory B=$(SAN) BIN=$(SAN)/stax SAN_CFLAGS='$(SAN_FLAGS)' $(SAN)/stax unit
	@logs=$$(mktemp -d "$${TMPDIR:-/tmp}/stax-san-logs.XXXXXX") && chmod 1777 "$$logs" && \
	STAX=$(CURDIR)/$(SAN)/stax STAX_UNIT_DIR=$(SAN)/unit STAX_SANITIZER_LOGS="$$logs" \
	ASAN_OPTIONS="log_path=$$logs/asan:detect_leaks=1:abort_on_error=0:handle_sigbus=0" \
	UBSAN_OPTIONS="log_path=$$logs/ubsan:print_stacktrace=1:halt_on_error=1" \
	sh tests/run.sh; rc=$$?; \
	if [ -d "$$logs/seen" ]; then echo "sanitizer reports: $$logs/seen"; else rm -rf "$$logs"; fi; exit $$rc

# make check-arm64: the tests of tests/arm64 in a real arm64 kernel
# (Debian 12's under qemu-system-aarch64 -cpu max, made from Debian's
# packages and cached in build/arm64/ by scripts/arm64-guest.sh), against
# stax and the test programs built cross into build-arm64/ with the
# guest's root as sysroot; then tests/arm64-host on this machine
# (scripts/check-arm64.sh). Last line "arm64: N passed, N failed".
A64_ROOT = $(CURDIR)/build/arm64/root
A64_CC = aarch64-linux-gnu-gcc --sysroot=$(A64_ROOT)
A64_CLANG = clang --target=aarch64-linux-gnu --sysroot=$(A64_ROOT)
check-arm64: test-deps arm64
	@$(MAKE) --no-print-directory all programs
	@sh scripts/check-arm64.sh

# make arm64: the guest (cached), stax and the test programs for arm64
# (make check-arm64 and make bench's arm64 section use them), the Go ones
# (tests/go) with this machine's go, GOARCH=arm64 and no cgo
arm64:
	@sh scripts/arm64-guest.sh build
	@$(MAKE) --no-print-directory B=build-arm64 BIN=build-arm64/stax CC='$(A64_CC)' build-arm64/stax
	@$(MAKE) -s -C tests/programs B=build-arm64 GCC='$(A64_CC)' CLANG='$(A64_CLANG)' arm64
	@for p in gochain gowork; do (cd tests/go/$$p && CGO_ENABLED=0 GOARCH=arm64 GOFLAGS=-mod=mod \
		go build -o $(CURDIR)/tests/programs/build-arm64/$$p .) || exit 1; done

bench:
	@sh scripts/deps.sh --bench
	@$(MAKE) --no-print-directory all programs
	@QUICK=$(QUICK) sh bench/run.sh

fuzz: build-deps
	@$(MAKE) --no-print-directory all
	@sh tests/fuzz/run.sh $${FUZZ_SECONDS:-300}

# make install / make uninstall: the GNU variables. DESTDIR is prepended
# to every path, so make install DESTDIR=DIR writes only under DIR.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
# stax agent's service (scripts/stax-agent.service, its ExecStart in BINDIR)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install
INSTALLED = $(DESTDIR)$(BINDIR)/stax $(DESTDIR)$(MANDIR)/man1/stax.1 \
	$(DESTDIR)$(BASHCOMPDIR)/stax $(DESTDIR)$(ZSHCOMPDIR)/_stax \
	$(DESTDIR)$(SYSTEMDUNITDIR)/stax-agent.service

# the man page with the version in its title line
$(B)/stax.1: docs/stax.1 $(B)/version
	@mkdir -p $(dir $@)
	sed '1s/^\.TH STAX 1 "\([^"]*\)" "stax"/.TH STAX 1 "\1" "stax $(VERSION_STRING)"/' docs/stax.1 >$@

.PHONY: install uninstall
install: $(BIN) $(B)/stax.1
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 755 $(BIN) $(DESTDIR)$(BINDIR)/stax
	$(INSTALL) -m 644 $(B)/stax.1 $(DESTDIR)$(MANDIR)/man1/stax.1
	$(INSTALL) -m 644 completion/stax.bash $(DESTDIR)$(BASHCOMPDIR)/stax
	$(INSTALL) -m 644 completion/_stax $(DESTDIR)$(ZSHCOMPDIR)/_stax
	sed 's|@BINDIR@|$(BINDIR)|g' scripts/stax-agent.service >$(B)/stax-agent.service
	$(INSTALL) -m 644 $(B)/stax-agent.service $(DESTDIR)$(SYSTEMDUNITDIR)/stax-agent.service

uninstall:
	rm -f $(INSTALLED)

# gcc -fanalyzer and cppcheck over src/; scripts/analyze.supp holds the
# findings that are not bugs, each with its reason
.PHONY: analyze
analyze: deps $(B)/bpf/moment.skel.h $(B)/bpf/kread.skel.h
	@sh scripts/analyze.sh

# make deb: stax built with Debian's flags (dpkg-buildflags, all hardening)
# in build/deb/obj, packaged by scripts/deb.sh into build/deb/
# For another machine (make deb CC="aarch64-linux-gnu-gcc --sysroot=DIR":
# the Debian architecture of the compiler's target, arm64) the flags are
# that architecture's, and Depends comes from the same sources built for
# this machine (build/deb/native, linked --as-needed as Debian's cross
# compilers link: the same libraries, whose Debian 12 package names and
# shlibs are those of every architecture; deb.sh checks that both
# binaries need the same ones).
DEB = $(B)/deb
DEB_ARCH = $(shell dpkg-architecture -qDEB_HOST_ARCH -t$$($(CC) -dumpmachine 2>/dev/null) 2>/dev/null)
DEB_BUILD_ARCH = $(shell dpkg-architecture -qDEB_BUILD_ARCH 2>/dev/null)
DEB_FLAGS = DEB_HOST_ARCH=$(DEB_ARCH) DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
.PHONY: deb
deb: $(B)/stax.1
	@command -v dpkg-buildflags >/dev/null || { echo "stax: error: make deb needs dpkg-dev (apt-get install -y dpkg-dev)" >&2; exit 1; }
	@$(MAKE) --no-print-directory B=$(DEB)/obj BIN=$(DEB)/obj/stax \
		CFLAGS="$$($(DEB_FLAGS) CFLAGS)" CPPFLAGS="$$($(DEB_FLAGS) CPPFLAGS)" \
		LDFLAGS="$$($(DEB_FLAGS) LDFLAGS)" $(DEB)/obj/stax
	@if [ "$(DEB_ARCH)" != "$(DEB_BUILD_ARCH)" ]; then \
		$(MAKE) --no-print-directory B=$(DEB)/native BIN=$(DEB)/native/stax CC=cc \
			LDFLAGS=-Wl,--as-needed $(DEB)/native/stax && \
		DEB_HOST_ARCH=$(DEB_ARCH) SHLIBS_BIN=$(DEB)/native/stax sh scripts/deb.sh $(DEB)/obj/stax $(B)/stax.1 $(VERSION_STRING) $(DEB); \
	else sh scripts/deb.sh $(DEB)/obj/stax $(B)/stax.1 $(VERSION_STRING) $(DEB); fi

clean:
	rm -rf $(B) $(SAN) build-clang build-arm64 stax tests/programs/build tests/programs/build-arm64

-include $(OBJ:.o=.d)
