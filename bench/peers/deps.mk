# What the C and C++ peers' Makefiles share to rebuild a program when a
# header it includes changes, included once OBJ is set: a compile given
# $(DEPS) lists the headers it read in OBJ/NAME.d (-MMD; -MP makes each a
# target of its own, so that a header removed stops no build), which make
# reads back here. What is built from NAME depends on OBJ/NAME.d too: if
# it is missing (built before the .d files were, or one removed), the
# empty rule "remakes" it and the build runs again.
DEPS = -MMD -MP -MF $(OBJ)/$(basename $(@F)).d
-include $(wildcard $(OBJ)/*.d)
$(OBJ)/%.d: ;
.PRECIOUS: $(OBJ)/%.d
