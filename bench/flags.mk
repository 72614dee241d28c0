# What the Makefiles share to rebuild on a change of compiler or flags:
#	FILE: $(call flags_changed,FILE,TEXT)
#		$(call flags_record,$@,TEXT)
# keeps TEXT in FILE, so that FILE's date says when it last changed and
# what depends on FILE is rebuilt then. flags_changed, expanded as make
# reads the rule, makes FILE out of date unless it holds TEXT already: so
# `make -n` shows only what a make would do. flags_record writes TEXT
# unless FILE holds it, and never under -n (make expands recipes even
# then). Both compare and write within make ($(file)), which keeps quotes,
# '#' and '$' as they are; runs of blanks count as one.
flags_same = $(and $(findstring $(1),$(2)),$(findstring $(2),$(1)))
flags_changed = $(if $(call flags_same,$(file <$(1)),$(strip $(2))),,FORCE)
flags_dry := $(findstring n,$(firstword -$(MAKEFLAGS)))
flags_record = $(if $(flags_dry)$(call flags_same,$(file <$(1)),$(strip \
	$(2))),,$(shell mkdir -p $(dir $(1)))$(file >$(1),$(strip $(2))))
