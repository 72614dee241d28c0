# usched: `make` builds libusched.a and libusched.so; `make test` runs the
# test suite at two optimisation levels and under sanitizers, then the
# benchmark, script and peer tests; `make install PREFIX=...`.

# make splits paths at blanks: a build here would write, and clean remove,
# paths cut in two, outside the tree.
ifneq ($(words $(CURDIR)),1)
$(error usched builds only in a directory whose path has no blanks, not \
	'$(CURDIR)')
endif

CC      ?= cc
# The compiler's own: a cross compiler's, for its objects.
OBJCOPY ?= $(shell $(CC) -print-prog-name=objcopy)
CFLAGS  ?= -O2 -g
PREFIX  ?= /usr/local
# Output directory; `make test` builds each configuration in its own. The
# default build puts the libraries here, and the objects, tests and
# examples under build/.
O       ?= .
# A newline in a path a message shows would print it in two lines:
# one_line shows it as \n.
define newline


endef
one_line = $(subst $(newline),\n,$1)
# make expands a '$' in a variable's value as it reads it: O='/home/me/$p'
# (p no variable) would name /home/me/, whose tests/ and examples/ clean
# would remove. Only make's own $(X) or ${X} can be meant: refuse_dollar
# stops at any other '$' in the value of the variable named $1, as it was
# given.
make_refs := $$( $${
refuse_dollar = $(if $(findstring $$,$(subst $(word 2,$(make_refs)),,\
	$(subst $(firstword $(make_refs)),,$(value $1)))),$(error $1='$(call \
	one_line,$(value $1))' has a '$$', which make expands: the path may \
	have none but in a $$(VAR) of make's))
$(call refuse_dollar,O)
# O, like the tree, must have no blanks: clean would remove the path's
# first word. An empty O would build in /.
ifneq ($(words $(O)),1)
$(error O must name one directory, with no blanks, not \
	'$(call one_line,$(O))')
endif
# An O naming a file, or a link to none, or under one, would stop at make's
# first write under it, with make's own error: the nearest of O and the
# directories above it that is there must be a directory (P/. is found only
# if P is one). up PATH: PATH and each directory above it but /.
up = $1 $(if $(filter-out /,$1),$(call up,$(patsubst %/,%,$(dir $1))))
o_there := $(firstword $(foreach p,$(call up,$(abspath $(O))),$(wildcard $p)))
ifeq ($(wildcard $(o_there)/.),)
$(error O='$(O)' $(if $(filter $(o_there),$(abspath $(O))),names a file,is \
	under a file ($(o_there))), not a directory: choose another O)
endif
# O's real path, through any link on its way, though O is not there yet.
o_real := $(realpath $(o_there))$(patsubst $(o_there)%,%,$(abspath $(O)))
# refuse_o DIRS,WHERE: stops if O names one of DIRS, in build/ (a % stands
# for any path), however it is spelled (./DIR, its absolute path, a link to
# it or to a directory above it), WHERE another build is; the message
# names the one it is.
refuse_o = $(foreach d,$(firstword $(foreach b,$(abspath build) \
	$(realpath build),$(patsubst $b%,build%,$(filter \
	$(patsubst build%,$b%,$1),$(abspath $(O)) $(o_real))))),\
	$(error O='$(O)' names $d, $2: choose another O))
# A build keeps its objects in OUT/obj, and those of its tests and
# examples in OUT/obj/tests and OUT/obj/examples: where a build with
# O=OUT/obj would put its tests and examples, and whence its clean would
# remove them. O naming build/ would share the objects and tests of the
# build without O (a make with other flags would rebuild them, its clean
# remove them); O naming build/obj, its tests' and examples' objects.
$(call refuse_o,build build/obj,where the build without O keeps its \
	objects and tests)
# The builds in build/ (make test's, check-matrix's, check-mutants') keep
# theirs in build/NAME/obj. (O=build/NAME, as make test gives it, is not
# refused.)
$(call refuse_o,build/%/obj,where a build in build/ keeps its objects and \
	tests)
# O naming the tree however it is spelled (./, its absolute path) is the
# default: build/, not tests/ and examples/, which clean would remove.
IN_TREE := $(filter $(CURDIR),$(realpath $(O)))
OUT     := $(if $(IN_TREE),build,$(O))
OBJ     := $(OUT)/obj

# -fno-semantic-interposition: the library's functions may inline each
# other (ll_wake into its function-table entry, ustack_self into
# ustack_abort) although they are exported. -Wcast-align: clang's warns on
# every target (gcc's only where alignment is strict), and a cast to a
# more aligned struct should say why it may.
BASE_CFLAGS = -std=gnu11 -Wall -Wextra -Wcast-align -fPIC \
	      -fno-semantic-interposition -pthread
ALL_CFLAGS  = $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS)
LDLIBS      = -pthread -lm

LIB_SRCS  := usched.c $(wildcard rr.c ll.c sched/*.c)
LIB_HDRS  := usched.h $(wildcard rr.h ll.h sched/*.h)
PUB_HDRS  := usched.h $(wildcard rr.h ll.h) sched/sched.h
LIB_OBJS  := $(LIB_SRCS:%.c=$(OBJ)/%.o)
TEST_SRCS := $(wildcard tests/t_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(OUT)/tests/%)
TEST_LIB  := $(OBJ)/tests/tap.o $(OBJ)/tests/tsched.o
# tmalloc.o replaces malloc: linked only into the tests that need it.
TMALLOC_TESTS := $(OUT)/tests/t_faults $(OUT)/tests/t_wake_block \
		 $(OUT)/tests/t_bufs
EXAMPLES  := $(patsubst examples/%.c,$(OUT)/examples/%,$(wildcard examples/*.c))

# Configurations `make test` runs: name, compiler and flags. ThreadSanitizer
# (clang's) checks the schedulers when clang is there. `make check-matrix`
# runs many more.
HARDEN      = -fstack-protector-strong
HAVE_CLANG := $(shell command -v clang >/dev/null 2>&1 && echo yes)
TEST_CONFIGS ?= O0 O2 asan ubsan $(if $(HAVE_CLANG),tsan)
CC_tsan    = clang
CFLAGS_tsan = -O1 -g -fsanitize=thread
CFLAGS_asan = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	      -fno-sanitize-recover=all
# UBSan alone: under ASan the stacks are copied by usched.c's own loop,
# not memcpy, whose arguments UBSan checks.
CFLAGS_ubsan = -O2 -g -fsanitize=undefined -fno-sanitize-recover=all
CFLAGS_O0  = -O0 -g $(HARDEN)
CFLAGS_O1  = -O1 -g $(HARDEN) -D_FORTIFY_SOURCE=2
CFLAGS_O2  = -O2 -g $(HARDEN) -D_FORTIFY_SOURCE=2
CFLAGS_O3  = -O3 -g $(HARDEN) -D_FORTIFY_SOURCE=2
CFLAGS_Os  = -Os -g $(HARDEN) -D_FORTIFY_SOURCE=2
CFLAGS_lto = -O2 -flto -g $(HARDEN) -D_FORTIFY_SOURCE=2

# Benchmarks: the usched programs, then every peer whose toolchain is here.
BENCH_BIN   := bench/bin
# ring-shift-K: the ring with its hot code, and the library's, K bytes on
# (bench/ring.c's RING_SHIFT), for make perf's placement sweep. Built with
# the others: make test's benchmark tests check them too.
RING_SHIFTS := $(foreach k,16 32 48 64 80 96 112,$(BENCH_BIN)/ring-shift-$k)
BENCH_PROGS := $(addprefix $(BENCH_BIN)/,ring ring-lto switch create skynet) \
	       $(RING_SHIFTS)
PEERS       := c cpp go rust

.PHONY: all check-build test check-matrix check-mutants install uninstall \
	clean distclean bench report perf FORCE
all: $(O)/libusched.a $(O)/libusched.so

# A resumed thread returns where no shadow stack (Intel CET) expects it:
# usched.o must never claim to support one, whatever CFLAGS ask. The target
# is asked with CFLAGS: they may name another (clang --target).
CET_OFF := $(if $(findstring x86_64,$(shell $(CC) $(CFLAGS) -dumpmachine \
		2>/dev/null)),\
		-fcf-protection=branch)

# What is built under OUT depends on the compiler and flags it was built
# with, recorded in OBJ/flags: a make with others, or an edit of the flags
# here, rebuilds it all. (Not ALL_CFLAGS: some targets add to it, and their
# prerequisites, this record among them, inherit it.) The benchmarks, in
# bench/bin whatever O is, have their own record, which also names the
# library they link.
include bench/flags.mk
BUILD_FLAGS = $(CC) $(BASE_CFLAGS) $(CET_OFF) $(CPPFLAGS) $(CFLAGS) \
	      $(LDFLAGS) $(LDLIBS)
$(OBJ)/flags: $(call flags_changed,$(OBJ)/flags,$(BUILD_FLAGS))
	$(call flags_record,$@,$(BUILD_FLAGS))

# install copies what was built here. With other CC or CFLAGS than the
# build's (the defaults, when `make CFLAGS=...` is followed by `sudo make
# install`), it would first rebuild everything with them: it stops instead.
built_flags := $(if $(filter install,$(MAKECMDGOALS)),$(file <$(OBJ)/flags))
ifneq ($(built_flags),)
ifeq ($(call flags_same,$(built_flags),$(strip $(BUILD_FLAGS))),)
$(error $(OUT) was built with '$(built_flags)', not \
	'$(strip $(BUILD_FLAGS))': give install the same CC, CPPFLAGS, \
	CFLAGS and LDFLAGS)
endif
endif

$(OBJ)/%.o: %.c $(LIB_HDRS) $(OBJ)/flags
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OBJ)/usched.o: ALL_CFLAGS += $(CET_OFF)

# Only the tests' objects depend on the tests' headers.
$(patsubst tests/%.c,$(OBJ)/tests/%.o,$(wildcard tests/*.c)): \
	tests/tap.h tests/tsched.h tests/tmalloc.h

# The static library holds two objects, the dispatcher and the schedulers
# (which use the dispatcher only through its API), whose global symbols are
# the API's alone: the library's own (hidden) symbols are made local, so
# that they cannot clash with a program's. A program that uses only the
# dispatcher links only the first. Objects built with -flto (in CFLAGS,
# CPPFLAGS or CC) hold compiler IR, which only the final link compiles:
# they go in as they are.
$(O)/libusched.a: $(LIB_OBJS)
	rm -f $@
ifeq ($(filter -flto%,$(CC) $(ALL_CFLAGS)),)
	@mkdir -p $(OBJ)/lib
	$(OBJCOPY) --localize-hidden $(OBJ)/usched.o $(OBJ)/lib/dispatcher.o
	$(CC) -nostdlib -r $(filter-out $(OBJ)/usched.o,$^) \
		-o $(OBJ)/lib/schedulers.o
	$(OBJCOPY) --localize-hidden $(OBJ)/lib/schedulers.o
	$(AR) rcs $@ $(OBJ)/lib/dispatcher.o $(OBJ)/lib/schedulers.o
else
	$(AR) rcs $@ $^
endif

# Programs record the soname and start only with a library of the same
# ABI: bump SOVERSION when a public struct or a signature changes.
# libusched.so, what -lusched finds when linking, points to it.
SOVERSION := 0
SONAME    := libusched.so.$(SOVERSION)

$(O)/$(SONAME): $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) $^ -o $@ \
		$(LDLIBS)

$(O)/libusched.so: $(O)/$(SONAME)
	ln -sf $(SONAME) $@

# Objects a test adds below go before the library: with -flto its archive
# holds the library's objects as they are, and one a test links itself
# must come first, or the archive's copy is pulled in as well.
$(OUT)/tests/%: $(OBJ)/tests/%.o $(TEST_LIB) $(O)/libusched.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(filter %.o,$^) $(filter %.a,$^) -o $@ \
		$(LDLIBS)

$(TMALLOC_TESTS): $(OBJ)/tests/tmalloc.o

# t_lock tests the schedulers' lock, whose symbols the library hides, and
# t_sched takes rr's to hold a waker still.
$(OUT)/tests/t_lock $(OUT)/tests/t_sched: $(OBJ)/sched/lock.o

# t_ringcheck tests the ring peers' shared checks.
$(OBJ)/tests/t_ringcheck.o: ALL_CFLAGS += -Ibench
$(OBJ)/tests/t_ringcheck.o: bench/peers/ring-check.h bench/args.h

# The examples include "usched.h", as a program built against an install.
$(OBJ)/examples/%.o: ALL_CFLAGS += -I.

$(OUT)/examples/%: $(OBJ)/examples/%.o $(O)/libusched.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

bench: $(BENCH_PROGS)
	@for p in $(PEERS); do $(MAKE) --no-print-directory \
		-C bench/peers/$$p || exit; done

BENCH_FLAGS = $(BUILD_FLAGS) $(abspath $(O))
$(BENCH_BIN)/.flags: $(call flags_changed,$(BENCH_BIN)/.flags,\
		$(BENCH_FLAGS))
	$(call flags_record,$@,$(BENCH_FLAGS))

# bench_link FLAGS: links a benchmark from the C files and the archive
# among its prerequisites, with FLAGS added.
bench_link = $(CC) $(ALL_CFLAGS) $(LDFLAGS) $1 $(filter %.c,$^) \
	$(filter %.a,$^) -o $@ $(LDLIBS)
BENCH_DEPS = bench/args.c bench/common.c bench/args.h bench/common.h \
	     $(O)/libusched.a $(BENCH_BIN)/.flags

$(BENCH_BIN)/%: bench/%.c $(BENCH_DEPS)
	@mkdir -p $(dir $@)
	$(call bench_link)

$(BENCH_BIN)/switch: bench/floor.c bench/floor.h
$(BENCH_BIN)/ring $(RING_SHIFTS): bench/peers/ring-check.h

# Only the K listed: another would not move the code by exactly K.
$(RING_SHIFTS): $(BENCH_BIN)/ring-shift-%: bench/ring.c $(BENCH_DEPS)
	@mkdir -p $(dir $@)
	$(call bench_link,-DRING_SHIFT=$*)

# ring-lto: the ring as a program built with -flto gets it, against the
# library built with the same flags and -flto, whose wait the link inlines
# into the ring's loop. The sub-make (lto_sub set) builds the archive under
# the other rule, for its O, and rebuilds it when a source or the flags
# changed. Its goal, lto-lib, has a recipe of its own: make does not say
# the archive "is up to date" at every make bench, and shows the commands
# (or not, under -s) as the make that runs it does. (Not build/lto: make
# test builds its configuration lto there.)
LTO_OUT   := build/ring-lto
LTO_LIB   := $(LTO_OUT)/libusched.a
ifeq ($(lto_sub),)
# An O naming LTO_OUT, however spelled, would build its archive there
# without -flto, and each make would rebuild what the other did.
$(call refuse_o,$(LTO_OUT),where make bench builds ring-lto's library)
$(LTO_LIB): FORCE
	@$(MAKE) --no-print-directory O=$(LTO_OUT) lto_sub=1 \
		CFLAGS='$(subst ','\'',$(CFLAGS)) -flto' lto-lib
else
.PHONY: lto-lib
lto-lib: $(LTO_LIB)
	@:
endif

$(BENCH_BIN)/ring-lto: bench/ring.c bench/args.c bench/common.c bench/args.h \
		bench/common.h bench/peers/ring-check.h $(LTO_LIB) \
		$(BENCH_BIN)/.flags
	@mkdir -p $(dir $@)
	$(call bench_link,-flto)

# Each public header compiles on its own: as C11 with -pedantic, by CC, and
# as C++ (if there is a C++ compiler); OUT/tests/cxx records which, so that
# another one checks them again. each_header COMPILE: a shell loop that
# stops at the first header COMPILE fails.
each_header = for h in $(PUB_HDRS); do echo "\#include \"$$h\"" | \
	$1 -Wall -Wextra -Werror -I. -fsyntax-only - || exit; done
$(OUT)/tests/c-header.ok: $(PUB_HDRS) $(OBJ)/flags
	@mkdir -p $(dir $@)
	@$(call each_header,$(CC) -x c -std=c11 -pedantic); touch $@
$(OUT)/tests/cxx: $(call flags_changed,$(OUT)/tests/cxx,$(CXX))
	$(call flags_record,$@,$(CXX))
$(OUT)/tests/cxx-header.ok: $(PUB_HDRS) $(OUT)/tests/cxx
	@mkdir -p $(dir $@)
	@if command -v $(CXX) >/dev/null 2>&1; then \
		$(call each_header,$(CXX) -x c++ -std=c++17); \
	fi; touch $@

check-build: all $(TEST_BINS) $(EXAMPLES) $(OUT)/tests/c-header.ok \
	$(OUT)/tests/cxx-header.ok

# The C tests of every configuration, which make test builds and runs.
TEST_RUNS = $(foreach c,$(TEST_CONFIGS),$(TEST_SRCS:tests/%.c=build/$c/tests/%))
test: bench
	@set -e; $(foreach c,$(TEST_CONFIGS),$(MAKE) --no-print-directory \
		O=build/$(c) CC="$(or $(CC_$(c)),$(CC))" \
		CFLAGS="$(CFLAGS_$(c)) -Werror" check-build >/dev/null;)
	prove --exec tests/run-test --timer \
		$(TEST_RUNS) \
		$(wildcard tests/t_*.sh tests/t_*.py)
	@for p in go rust; do $(MAKE) --no-print-directory -s \
		-C bench/peers/$$p test || exit; done

# Performance and scale figures against their goals; PERF_ARGS=--big adds
# the 100-million-thread ring.
perf: bench
	python3 scripts/perf.py $(PERF_ARGS)

# The comparison report: PROFILE=quick (default) or full.
report:
	scripts/report.sh

# Every compiler and optimisation level, sanitizers, valgrind, aarch64.
check-matrix:
	tests/matrix.sh

# Each mutant of the switch's assembly, on x86-64 and (under qemu) aarch64,
# and of usched.c's C code must fail one of the dispatcher's tests; each
# mutant of the schedulers' C code (ll.c, rr.c, sched/), one of theirs.
check-mutants:
	python3 tests/mutants.py

# The flags of configuration C, for tests/matrix.sh.
print-cflags-%:
	@echo '$(CFLAGS_$*)'

# The headers go in include/usched/, clear of other libraries' rr.h or
# sched/: usched.pc's -I names it, so programs include "usched.h", "ll.h".
# usched.pc is written at install time: it names this install's PREFIX.
INCDIR = $(DESTDIR)$(PREFIX)/include/usched
LIBDIR = $(DESTDIR)$(PREFIX)/lib
# A space in them, even a trailing one, would split a path in two, the
# second taken from / or from here; the shell or sed would take these
# characters for their own; a '$' (refuse_dollar) make would expand:
# PREFIX='/tmp/a$b' would name /tmp/a. A relative PREFIX, in usched.pc,
# would name a directory under wherever pkg-config's user builds; a
# relative DESTDIR (GNU's is absolute), one in the tree under make -C, not
# in the directory make was started from.
unsafe_chars := & | ; < > ( ) ` \ " ' * ? [ ] { } ~ ! $$ \# %
one_prefix = $(foreach v,DESTDIR PREFIX,$(call refuse_dollar,$v))$(if \
	$(filter-out 1 1 1,$(words $(DESTDIR)$(PREFIX)) \
	$(words $(INCDIR)) $(words $(LIBDIR))),$(error DESTDIR and PREFIX \
	must make one path with no spaces, not '$(call \
	one_line,$(DESTDIR)$(PREFIX))'))$(if \
	$(strip $(foreach c,$(unsafe_chars),$(findstring \
	$c,$(DESTDIR)$(PREFIX)))),\
	$(error DESTDIR and PREFIX must make a path without any of \
	$(unsafe_chars), not '$(DESTDIR)$(PREFIX)'))$(if \
	$(filter-out /%,$(PREFIX)),$(error PREFIX must be an absolute path, \
	not '$(PREFIX)'))$(if $(filter-out /%,$(DESTDIR)),$(error DESTDIR \
	must be an absolute path (make -C takes a relative one from the \
	tree), not '$(DESTDIR)'))

# Refused before install's prerequisite builds anything.
ifneq ($(filter install uninstall,$(MAKECMDGOALS)),)
$(one_prefix)
endif

install: all
	@mkdir -p $(OBJ)
	sed -e 's|@PREFIX@|$(PREFIX)|' usched.pc.in > $(OBJ)/usched.pc
	install -d $(INCDIR)/sched $(LIBDIR)/pkgconfig
	install -m 644 $(filter-out sched/%,$(PUB_HDRS)) $(INCDIR)/
	install -m 644 sched/sched.h $(INCDIR)/sched/
	install -m 644 $(O)/libusched.a $(LIBDIR)/
	install -m 755 $(O)/$(SONAME) $(LIBDIR)/
	ln -sf $(SONAME) $(LIBDIR)/libusched.so
	install -m 644 $(OBJ)/usched.pc $(LIBDIR)/pkgconfig/

# Removes what install put under PREFIX, and include/usched if that is
# left empty; nothing else.
uninstall:
	rm -f $(addprefix $(INCDIR)/,$(PUB_HDRS)) \
		$(addprefix $(LIBDIR)/,libusched.a libusched.so $(SONAME) \
			pkgconfig/usched.pc)
	[ ! -d $(INCDIR)/sched ] || \
		rmdir --ignore-fail-on-non-empty $(INCDIR)/sched $(INCDIR)

# clean keeps report/: its results may be hours of a full sweep. Under
# O=DIR it removes what the build put in DIR, and DIR if that leaves it
# empty. The benchmarks, which every O shares, go with the O whose library
# they last linked (their record ends with it), and the peers with the
# tree's own clean.
BENCH_OURS = $(filter $(abspath $(O)),\
	$(lastword $(file <$(BENCH_BIN)/.flags)))
clean:
	rm -rf $(if $(IN_TREE),build,$(OBJ) $(OUT)/tests $(OUT)/examples) \
		$(addprefix $(O)/,libusched.a libusched.so $(SONAME)) \
		$(if $(IN_TREE)$(BENCH_OURS),$(BENCH_BIN))
	$(if $(IN_TREE),,[ ! -d $(O) ] || rmdir --ignore-fail-on-non-empty $(O))
	$(if $(IN_TREE),@for p in $(PEERS); do \
		$(MAKE) --no-print-directory -C bench/peers/$$p clean; done)

distclean: clean
	rm -rf report
