device.o: device.m include/Metal/Metal.h emu.h \
  /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h

include/Metal/Metal.h:

emu.h:

/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h:
