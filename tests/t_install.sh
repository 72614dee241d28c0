#!/bin/bash
# make install, as a user sees it: the headers (in include/usched), both
# libraries and usched.pc land under PREFIX (a second install under
# another PREFIX names its own; one with a space, a '$' or a relative one,
# or a relative DESTDIR, is refused before anything is built), and
# programs build against them with pkg-config alone: the README's complete
# program, linked shared and static, and one that uses both schedulers, in
# C and C++. Also: what make uninstall and make clean leave.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

if ! command -v pkg-config >/dev/null; then
	echo "1..0 # SKIP pkg-config is not installed"
	exit 0
fi

# make_in PREFIX TARGET [DESTDIR [MAKE VARIABLES...]]: a make of its own
# (own_make), building in $tmp/build.
make_in() {
	own_make "$tmp/make.log" "$root" -s O="$tmp/build" "$2" PREFIX="$1" \
		DESTDIR="${3:-}" "${@:4}"
}

install_to() {
	make_in "$1" install
}

# refuses PREFIX DESTDIR: make install with them fails before it builds
# anything (its O, which would be new, is not made), or installs.
refuses() {
	make_in "$1" install "$2" O="$tmp/fresh" >/dev/null
	[ $? != 0 ] && ! [ -e "$tmp/fresh" ] && ! [ -e "$tmp/x" ]
}

pc() {
	local prefix=$1
	shift
	PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config "$@" usched
}

install_to "$tmp/a"
ok $? "make install PREFIX=TMP/a"
# With other flags than the build's, install would rebuild first: it stops.
make_in "$tmp/z" install "" CFLAGS="-O1 -g" 2>/dev/null
[ $? != 0 ] && [ ! -e "$tmp/z" ] &&
	grep -q "was built with '.* -O2 -g .*', not '.* -O1 -g .*': give install the same CC, CPPFLAGS, CFLAGS and LDFLAGS" \
		"$tmp/make.log"
ok $? "make install with other CFLAGS than the build's: refused, saying why; nothing installed"
make_in "$tmp/z" install "" CFLAGS="-O2  -g" && [ -e "$tmp/z/lib/libusched.a" ]
ok $? "with the build's own CFLAGS given, it installs"
rm -rf "$tmp/z"
missing=
for f in include/usched/usched.h include/usched/ll.h include/usched/rr.h \
	 include/usched/sched/sched.h lib/libusched.a lib/libusched.so \
	 lib/libusched.so.0 lib/pkgconfig/usched.pc; do
	[ -f "$tmp/a/$f" ] || missing+=" $f"
done
[ -z "$missing" ]
ok $? "it installs the headers, both libraries and usched.pc${missing:+ (missing:$missing)}"
got=$(ls "$tmp/a/include" | tr '\n' ' ')
[ "$got" = "usched " ]
ok $? "include/ gets usched/ alone, not rr.h or sched/ beside other" \
	"libraries' ($got)"
[ "$(pc "$tmp/a" --variable=prefix)" = "$tmp/a" ]
ok $? "usched.pc names the prefix"
[ "$(readlink "$tmp/a/lib/libusched.so")" = libusched.so.0 ] &&
	readelf -d "$tmp/a/lib/libusched.so.0" |
	grep -q 'SONAME.*\[libusched\.so\.0\]'
ok $? "libusched.so links to libusched.so.0, whose soname names its ABI"
(umask 077 && install_to "$tmp/b") &&
	[ "$(pc "$tmp/b" --variable=prefix)" = "$tmp/b" ]
ok $? "a second install, under another prefix, names its own"
modes=$(cd "$tmp/b" && stat -c "%a %n" include/usched/usched.h \
	include/usched/sched/sched.h lib/libusched.a lib/libusched.so.0 \
	lib/pkgconfig/usched.pc)
[ "$modes" = "644 include/usched/usched.h
644 include/usched/sched/sched.h
644 lib/libusched.a
755 lib/libusched.so.0
644 lib/pkgconfig/usched.pc" ]
ok $? "under umask 077 too, everyone may read what it installs: $(echo $modes)"
# Only the API is exported: a program may name its own functions freely.
extra=$(nm -D --defined-only "$tmp/b/lib/libusched.so" | awk '{ print $3 }' |
	grep -Ev '^(usched|ustack|rr|ll|sched)_')
[ -z "$extra" ]
ok $? "libusched.so exports only usched_, ustack_, rr_, ll_, sched_ names${extra:+ (also: $(echo $extra))}"
extra=$(nm -g --defined-only "$tmp/b/lib/libusched.a" |
	awk 'NF == 3 { print $3 }' | grep -Ev '^(usched|ustack|rr|ll|sched)_')
[ -z "$extra" ]
ok $? "so does libusched.a${extra:+ (also: $(echo $extra))}"

# The README's complete program, as printed there.
awk '/^A complete program/ { f = 1 } f && /^```$/ { exit }
     p { print } f && /^```c$/ { p = 1 }' "$root/README.md" >"$tmp/hello.c"
grep -q "usched_run" "$tmp/hello.c"
ok $? "the README has a complete program"
# It is examples/hello.c but for that file's opening comment.
tail -n +2 "$root/examples/hello.c" | diff - "$tmp/hello.c" >&2
ok $? "it is examples/hello.c, but for the opening comment"
want=$'ping 0\npong 0\nping 1\npong 1\nping 2\npong 2'
cc -std=gnu11 -Wall -Wextra -Werror "$tmp/hello.c" \
	$(pc "$tmp/b" --cflags --libs) -o "$tmp/hello" &&
	[ "$(LD_LIBRARY_PATH="$tmp/b/lib" "$tmp/hello")" = "$want" ] &&
	LD_LIBRARY_PATH="$tmp/b/lib" ldd "$tmp/hello" |
	grep -q "libusched\.so\.0 => $tmp/b/lib/libusched\.so\.0 "
ok $? "it builds with pkg-config's flags, runs on libusched.so.0 and takes turns"
# As the README says, without pkg-config.
cc -std=gnu11 -Wall -Wextra -Werror "$tmp/hello.c" -I"$tmp/b/include/usched" \
	"$tmp/b/lib/libusched.a" -pthread -o "$tmp/hello-static" &&
	[ "$("$tmp/hello-static")" = "$want" ] &&
	! ldd "$tmp/hello-static" | grep -q libusched
ok $? "linked with libusched.a, it needs no libusched.so, nor pkg-config"
names=$(nm "$tmp/hello-static" | grep -E ' [A-Za-z] (rr|ll|procs?|sched)_')
[ -n "$(nm "$tmp/hello-static" | grep ' [Tt] ustack_block$')" ] &&
	[ -z "$names" ]
ok $? "it uses only the dispatcher, and links none of the schedulers' code${names:+ (has: $(echo $names | head -c 199))}"

# Both schedulers by their own headers, and through sched/sched.h.
cat >"$tmp/scheds.c" <<'EOF'
#include <ll.h>
#include <rr.h>
#include <sched/sched.h>
#include <stdio.h>

static int ran;

static void count(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&ran, 1, __ATOMIC_RELAXED);
}

int main(void)
{
	const struct sched_ops *rr = sched_find("rr");

	if (ll_init(1, 1) != 0 || ll_thread_init(count, NULL, 0) == NULL ||
	    ll_start() != 0 || ll_fini() != 0)
		return 1;
	if (rr == NULL || rr->so_init(1, 1) != 0 ||
	    rr->so_spawn(count, NULL, 0) == NULL || rr->so_start() != 0 ||
	    rr->so_fini() != 0)
		return 1;
	printf("%d\n", ran);
	return 0;
}
EOF
for lang in c c++; do
	compiler=cc
	[ $lang = c++ ] && compiler=c++
	if ! command -v $compiler >/dev/null; then
		echo "# skipping $lang: no $compiler"
		continue
	fi
	$compiler -x $lang -Wall -Wextra -Werror "$tmp/scheds.c" -x none \
		$(pc "$tmp/b" --cflags --libs) -o "$tmp/scheds-$lang" &&
		[ "$(LD_LIBRARY_PATH="$tmp/b/lib" "$tmp/scheds-$lang")" = 2 ]
	ok $? "as $lang, a program of ll.h, rr.h and sched/sched.h builds and runs a thread on each"
done

# Names the library uses inside, which a program may have too.
cat >"$tmp/own.c" <<'EOF'
int procs_init(void) { return 0; }
void proc_kick(void) {}
void uarch_switch(void) {}
int proc_current;
EOF
cc -Wall -Wextra -Werror "$tmp/scheds.c" "$tmp/own.c" $(pc "$tmp/b" --cflags) \
	"$tmp/b/lib/libusched.a" $(pc "$tmp/b" --libs-only-other) \
	-o "$tmp/own" 2>"$tmp/own.log" && [ "$("$tmp/own")" = 2 ]
rc=$?
[ $rc = 0 ] || sed 's/^/# /' "$tmp/own.log" | head -4
ok $rc "linked with libusched.a, a program with functions and data named like the library's own builds and runs"

# make uninstall takes back what install put there, and only that.
touch "$tmp/a/lib/other.a"
mkdir -p "$tmp/c/include/usched/sched"
touch "$tmp/c/include/usched/sched/other.h"
install_to "$tmp/c" && make_in "$tmp/a" uninstall &&
	make_in "$tmp/c" uninstall &&
	[ "$(cd "$tmp/a" && find . ! -type d -o -type d -path '*/usched*')" = \
	  ./lib/other.a ] &&
	[ "$(cd "$tmp/c" && find . ! -type d)" = \
	  ./include/usched/sched/other.h ]
ok $? "make uninstall removes what make install added, and an" \
	"include/usched left empty, and keeps what it did not add"

# A space in PREFIX or DESTDIR, even a trailing one, is refused before
# anything is installed: it split a path in two, the second part taken
# from / or from the source tree.
for bad in "$tmp/x y|" "$tmp/x |" "/usr|$tmp/x " "$tmp/x"$'\n'"y|"; do
	refuses "${bad%|*}" "${bad#*|}" &&
		grep -q "no spaces" "$tmp/make.log" && ! [ -e "$root/y" ]
	rc=$?
	bad=${bad//"$tmp"/TMP}
	bad=${bad//$'\n'/\\n}
	ok $rc "make install PREFIX='${bad%|*}' DESTDIR='${bad#*|}':" \
		"refused, with the reason; nothing made"
done
# A newline in either, refused as a blank or beside a '$', is shown as \n:
# the message was two lines.
for bad in "$tmp/x"$'\n'"y|" "/usr|$tmp/x"$'\n'"y" "$tmp/x\$"$'\n'"y|"; do
	refuses "${bad%|*}" "${bad#*|}"
	rc=$?
	bad=${bad//$'\n'/\\n}
	shown=${bad%|}
	[ $rc = 0 ] && [ "$(wc -l <"$tmp/make.log")" = 1 ] &&
		grep -qF "${shown#/usr|}" "$tmp/make.log"
	rc=$?
	bad=${bad//"$tmp"/TMP}
	ok $rc "make install PREFIX='${bad%|*}' DESTDIR='${bad#*|}':" \
		"refused in one line, naming it"
done
# Characters the shell or sed would take for their own, likewise.
for bad in "$tmp/x&y|" "$tmp/x;y|" "/usr|$tmp/x'y" "$tmp/x\\y|"; do
	refuses "${bad%|*}" "${bad#*|}" &&
		grep -q "must make a path without any of" "$tmp/make.log"
	rc=$?
	bad=${bad//"$tmp"/TMP}
	ok $rc "make install PREFIX='${bad%|*}' DESTDIR='${bad#*|}':" \
		"refused, with the reason; nothing made"
done

# A relative PREFIX, which usched.pc would name as it is, likewise; under
# a DESTDIR it ran on into the DESTDIR's name. Both name TMP/x.
rel=$(realpath --relative-to="$root" "$tmp")
for bad in "$rel/x|" "x|$tmp/"; do
	refuses "${bad%|*}" "${bad#*|}" &&
		grep -q "PREFIX must be an absolute path" "$tmp/make.log"
	rc=$?
	bad=${bad//"$tmp"/TMP}
	bad=${bad//"$rel"/REL_TMP}
	ok $rc "make install PREFIX='${bad%|*}' DESTDIR='${bad#*|}':" \
		"refused, with the reason; nothing made"
done

# A relative DESTDIR (GNU's is absolute): make -C took it from the tree,
# not from where make was started. Refused, from there and from the tree.
stage=usched-stage.$$
mkdir -p "$tmp/w"
for from in "$tmp/w" "$root"; do
	(cd "$from" && refuses /usr "$stage") &&
		grep -q "DESTDIR must be an absolute path .*, not '$stage'" \
			"$tmp/make.log" && ! [ -e "$tmp/w/$stage" ] &&
		! [ -e "$root/$stage" ]
	rc=$?
	rm -rf "${root:?}/$stage" "$tmp/w/$stage"
	[ "$from" = "$root" ] && from=TREE || from=TMP/w
	ok $rc "make -C TREE install DESTDIR=$stage, from $from: refused," \
		"with the reason; nothing made"
done

# make expands a '$' in PREFIX or DESTDIR as it reads them: '/x$y' named
# /x (y is no variable of make's), from the command line or the
# environment. Refused before anything is installed; make's own $(X) may
# be meant.
for bad in "$tmp/x\$y|" "/usr|$tmp/x\$y" "$tmp/x\$\$y|" "$tmp/x\$|"; do
	refuses "${bad%|*}" "${bad#*|}" &&
		grep -q "has a '\$', which make expands: the path may have none but in a \$(VAR) of make's" \
			"$tmp/make.log"
	rc=$?
	bad=${bad//"$tmp"/TMP}
	ok $rc "make install PREFIX='${bad%|*}' DESTDIR='${bad#*|}':" \
		"refused, with the reason; nothing made"
done
PREFIX="$tmp/x\$y" own_make "$tmp/make.log" "$root" -s O="$tmp/fresh" \
	install >/dev/null
[ $? != 0 ] && grep -q "has a '\$', which make expands" "$tmp/make.log" &&
	! [ -e "$tmp/fresh" ] && ! [ -e "$tmp/x" ]
ok $? "PREFIX='TMP/x\$y' from the environment: refused likewise"
make_in "$tmp/b\$y" uninstall >/dev/null
[ $? != 0 ] && grep -q "has a '\$', which make expands" "$tmp/make.log" &&
	[ -e "$tmp/b/lib/libusched.a" ]
ok $? "make uninstall PREFIX='TMP/b\$y': refused; TMP/b's install stays"
make_in '$(T)/d' install "" T="$tmp" && [ -e "$tmp/d/lib/libusched.a" ] &&
	[ "$(pc "$tmp/d" --variable=prefix)" = "$tmp/d" ]
ok $? "PREFIX='\$(T)/d' T=TMP: installs in TMP/d, which usched.pc names"

# A full sweep's results take hours: only distclean removes them.
recipe() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$root" -n -s \
		--no-print-directory "$1" 2>/dev/null
}
! recipe clean | grep -q report && recipe distclean | grep -q "rm -rf report"
ok $? "make clean keeps report/, make distclean removes it"

tap_done
