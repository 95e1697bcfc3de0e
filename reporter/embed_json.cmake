# Writes OUT: a C++ source defining NAME as the raw text of IN.
file(READ "${IN}" content)
file(WRITE "${OUT}.tmp" "// Generated from ${IN}; do not edit.\n#include \"reporter/paper_data.h\"\nnamespace torchgauge::reporter {\nconst char* const ${NAME} = R\"tgjson(${content})tgjson\";\n}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
