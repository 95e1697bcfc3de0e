# Writes OUT: a C++ source defining NAMESPACE::NAME (external linkage) as the
# raw text of IN. Used with cmake -P by the targets that embed a data file.
file(READ "${IN}" content)
file(WRITE "${OUT}.tmp" "// Generated from ${IN}; do not edit.\nnamespace ${NAMESPACE} {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"tgjson(${content})tgjson\";\n}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
