# SPDX-License-Identifier: MIT
# Manual pages, rendered at build time by lowdown (cmake/render_man.sh) and installed:
#   man1: docs/<tool>.md for every tool (tk_tool() lists them in the TK_TOOLS property)
#   man3: docs/man3/<name>.md, one page per public API family
# Test man_pages: each renders with `man -l` without warnings, every tool has a page, and
# the man3 examples compile and link against the library they name.
find_program(TK_LOWDOWN lowdown)
if(NOT TK_LOWDOWN)
  message(FATAL_ERROR "lowdown renders the manual pages: run scripts/setup-deps.sh build "
                      "(Debian package lowdown), or configure with -DTK_BUILD_MAN=OFF")
endif()

set(TK_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(TK_MAN_PAGES "")
function(tk_man_page md name section)
  set(out ${TK_MAN_DIR}/man${section}/${name}.${section})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${TK_MAN_DIR}/man${section}
    COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/render_man.sh ${TK_LOWDOWN} ${md} ${out} ${name} ${section}
            "tracekit ${PROJECT_VERSION}" ${CMAKE_INSTALL_FULL_DOCDIR}
    DEPENDS ${md} ${PROJECT_SOURCE_DIR}/cmake/render_man.sh
    COMMENT "Rendering ${name}(${section})" VERBATIM)
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  set(TK_MAN_PAGES ${TK_MAN_PAGES} ${out} PARENT_SCOPE)
endfunction()

get_property(tk_tools GLOBAL PROPERTY TK_TOOLS)
foreach(tool ${tk_tools})
  get_target_property(prog ${tool} OUTPUT_NAME) # the program's name, when not the target's
  if(NOT prog)
    set(prog ${tool})
  endif()
  if(EXISTS ${PROJECT_SOURCE_DIR}/docs/${prog}.md)
    tk_man_page(${PROJECT_SOURCE_DIR}/docs/${prog}.md ${prog} 1)
  endif()
endforeach()
file(GLOB tk_man3_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man3/*.md)
foreach(md ${tk_man3_sources})
  get_filename_component(name ${md} NAME_WE)
  tk_man_page(${md} ${name} 3)
endforeach()
add_custom_target(man ALL DEPENDS ${TK_MAN_PAGES})
