# stax - sampling CPU profiler for Linux.
#   make          build ./stax (installs missing Debian packages as root)
#   make run      profile the bundled demo and print where its time went
#   make check    build and run every test; last line "N passed, N failed"
#   make bench    measure stax against perf (bench/report.md)
#   make fuzz     run the fuzz targets longer (FUZZ_SECONDS=300; FUZZ_ONLY=NAME for one)

CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Isrc -D_GNU_SOURCE -MMD -MP
LDLIBS = -ldw -lelf -lzstd -lxxhash -lz -llzma -liberty -lpthread -ldl
# capstone (annotate) and libmicrohttpd (serve) are opened when used, by
# the names of the libraries their headers come with (Debian 12's names
# in the code when the headers are not installed yet)
soname = $(shell objdump -p $$($(CC) -print-file-name=lib$(1).so) 2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
CAPSTONE_SONAME := $(call soname,capstone)
MICROHTTPD_SONAME := $(call soname,microhttpd)

B = build
SRC := $(shell find src -name '*.c' | sort)
OBJ := $(SRC:%.c=$(B)/%.o)
LIBOBJ := $(filter-out $(B)/src/main.o $(B)/src/cmd/%,$(OBJ))
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/unit/%)

.PHONY: all deps test-deps run check bench fuzz clean programs unit
all: deps stax

deps:
	@sh scripts/deps.sh

test-deps:
	@sh scripts/deps.sh --test

stax: $(OBJ)
	$(CC) $(CFLAGS) -o $@ $(OBJ) $(LDLIBS)

$(B)/src/view/annotate.o: CFLAGS += $(if $(CAPSTONE_SONAME),-DCAPSTONE_SONAME='"$(CAPSTONE_SONAME)"')
$(B)/src/serve/serve.o: CFLAGS += $(if $(MICROHTTPD_SONAME),-DMICROHTTPD_SONAME='"$(MICROHTTPD_SONAME)"')

$(B)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/unit/%: tests/unit/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBOBJ) $(LDLIBS)

unit: $(UNIT_BIN)

# the web page is written as HTML and compiled in as a string
src/serve/page.c: src/serve/page.html src/serve/gen-page.sh
	sh src/serve/gen-page.sh src/serve/page.html >$@

programs:
	@$(MAKE) -s -C tests/programs

run: all
	@$(MAKE) -s -C tests/programs demo
	@echo "== stax record -o demo.data -- tests/programs/build/demo"
	./stax record -o $(B)/demo.data -- tests/programs/build/demo
	@echo; echo "== stax top -i $(B)/demo.data -n 10"
	@./stax top -i $(B)/demo.data -n 10
	@echo; echo "== stax flame -i $(B)/demo.data"
	@./stax flame -i $(B)/demo.data

check: all test-deps unit programs
	@sh tests/run.sh

bench: all programs
	@sh scripts/deps.sh --bench
	@QUICK=$(QUICK) sh bench/run.sh

fuzz: all
	@sh tests/fuzz/run.sh $${FUZZ_SECONDS:-300}

clean:
	rm -rf $(B) stax tests/programs/build

-include $(OBJ:.o=.d)
