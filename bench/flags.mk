# What the Makefiles share to rebuild on a change of compiler or flags:
# $(call flags_record,FILE,TEXT), in a FORCE rule's recipe, writes TEXT to
# FILE unless FILE holds it already, so that FILE's date says when they
# last changed and what depends on FILE is rebuilt then. It compares and
# writes within make ($(file)), which keeps quotes, '#' and '$' as they
# are; runs of blanks count as one.
flags_same = $(and $(findstring $(1),$(2)),$(findstring $(2),$(1)))
flags_record = $(shell mkdir -p $(dir $(1)))$(if \
	$(call flags_same,$(file <$(1)),$(strip $(2))),,$(file >$(1),$(strip $(2))))
