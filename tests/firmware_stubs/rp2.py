"""Stub of MicroPython's ``rp2`` module for testing the firmware off the Pico.

Runs under the MicroPython unix port and CPython. ``asm_pio`` assembles the program the way
MicroPython does (the decorated function runs with the instruction names as its globals, in
two passes for the labels), into symbolic instructions; ``StateMachine`` loads it at the top of
the 32-word instruction memory like the Pico SDK and *executes* it, one instruction per cycle,
for the instructions the firmware uses (jmp, mov, in, out, push, nop). Pin levels come from
``machine.Pin`` stubs. Source: RP2040 datasheet section 3.4 (PIO instruction set).
"""

import machine

MASK = 0xFFFFFFFF


class PIO:
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1
    IN_LOW = 0
    IN_HIGH = 1
    OUT_LOW = 2
    OUT_HIGH = 3
    JOIN_NONE = 0


class PIOASMError(Exception):
    pass


class _Program:
    def __init__(self, kw):
        self.kw = kw
        self.instr = []
        self.labels = {}
        self.wrap_target = 0
        self.wrap = None


class _Emit:
    def __init__(self, prog):
        self.prog = prog
        self.pass_ = 0
        self.n = 0

    def start_pass(self, p):
        self.pass_ = p
        self.n = 0
        if p == 1:
            self.prog.instr = []

    def _add(self, ins):
        if self.n >= 32:
            raise PIOASMError("program too long")
        if self.pass_ == 1:
            self.prog.instr.append(ins)
        self.n += 1

    def label(self, name):
        if self.pass_ == 0:
            if name in self.prog.labels:
                raise PIOASMError("duplicate label " + name)
            self.prog.labels[name] = self.n

    def wrap_target(self):
        self.prog.wrap_target = self.n

    def wrap(self):
        self.prog.wrap = self.n - 1

    def nop(self):
        self._add(("mov", "y", "y"))

    def jmp(self, cond, label=None):
        if label is None:
            cond, label = None, cond
        self._add(("jmp", cond, label))

    def mov(self, dest, src):
        self._add(("mov", dest, src))

    def in_(self, src, n):
        self._add(("in", src, n))

    def out(self, dest, n):
        self._add(("out", dest, n))

    def push(self, mode="block"):
        self._add(("push", mode))


def invert(reg):
    return ("invert", reg)


def asm_pio(**kw):
    """Assemble the decorated function into a program (symbolic instructions)."""

    def dec(f):
        prog = _Program(kw)
        emit = _Emit(prog)
        gl = {
            "label": emit.label, "wrap_target": emit.wrap_target, "wrap": emit.wrap,
            "nop": emit.nop, "jmp": emit.jmp, "mov": emit.mov, "in_": emit.in_,
            "out": emit.out, "push": emit.push, "invert": invert,
            "pins": "pins", "x": "x", "y": "y", "isr": "isr", "osr": "osr", "pc": "pc",
            "null": "null", "y_dec": "y_dec", "x_dec": "x_dec", "noblock": "noblock",
            "block": "block",
        }
        old = f.__globals__.copy()
        f.__globals__.clear()
        f.__globals__.update(gl)
        try:
            emit.start_pass(0)
            f()
            emit.start_pass(1)
            f()
        finally:
            f.__globals__.clear()
            f.__globals__.update(old)
        if prog.wrap is None:
            prog.wrap = len(prog.instr) - 1
        return prog

    return dec


class StateMachine:
    """Executes a stub program. ``run(cycles)`` advances it; ``get`` runs it until a value is
    pushed when the RX FIFO is empty (the real ``get`` blocks until then)."""

    FIFO_DEPTH = 4

    def __init__(self, sm_id, prog, freq=-1, in_base=None, **kw):
        self.id = sm_id
        self.prog = prog
        self.offset = 32 - len(prog.instr)  # the SDK loads at the highest free address
        self.in_base = in_base
        self.cycles = 0
        self.running = False
        self.pc = self.offset
        self.x = self.y = self.isr = self.osr = 0
        self.isr_count = 0
        self.osr_count = 32
        self.fifo = []
        self.in_left = prog.kw.get("in_shiftdir", PIO.SHIFT_LEFT) == PIO.SHIFT_LEFT
        self.out_right = prog.kw.get("out_shiftdir", PIO.SHIFT_RIGHT) == PIO.SHIFT_RIGHT

    def active(self, v=None):
        if v is not None:
            self.running = bool(v)
        return self.running

    def rx_fifo(self):
        return len(self.fifo)

    def get(self):
        for _ in range(1000):
            if self.fifo:
                return self.fifo.pop(0)
            self.run(1)
        raise RuntimeError("state machine pushed nothing in 1000 cycles")

    def _pins(self):
        base = machine.pin_number(self.in_base)
        return machine.level(base) | (machine.level(base + 1) << 1)

    def _read(self, src):
        if isinstance(src, tuple):
            return ~self._read(src[1]) & MASK
        if src == "null":
            return 0
        if src == "pins":
            return self._pins()
        return getattr(self, src)

    def run(self, cycles):
        """Execute ``cycles`` instructions (one cycle each; the firmware uses no delays)."""
        instr = self.prog.instr
        labels = self.prog.labels
        wrap = self.offset + self.prog.wrap
        wrap_target = self.offset + self.prog.wrap_target
        for _ in range(cycles):
            addr = self.pc
            ins = instr[addr - self.offset]
            op = ins[0]
            nxt = wrap_target if addr == wrap else addr + 1
            if op == "jmp":
                cond, label = ins[1], ins[2]
                take = True
                if cond == "y_dec":
                    take = self.y != 0
                    self.y = (self.y - 1) & MASK
                elif cond == "x_dec":
                    take = self.x != 0
                    self.x = (self.x - 1) & MASK
                if take:
                    nxt = self.offset + labels[label]
            elif op == "mov":
                value = self._read(ins[2])
                dest = ins[1]
                if dest == "pc":
                    nxt = value & 31
                elif dest == "isr":
                    self.isr, self.isr_count = value, 0
                elif dest == "osr":
                    self.osr, self.osr_count = value, 0
                else:
                    setattr(self, dest, value)
            elif op == "in":
                n = ins[2]
                data = self._read(ins[1]) & ((1 << n) - 1)
                if self.in_left:
                    self.isr = ((self.isr << n) | data) & MASK
                else:
                    self.isr = (self.isr >> n) | (data << (32 - n))
                self.isr_count = min(32, self.isr_count + n)
            elif op == "out":
                n = ins[2]
                if self.out_right:
                    data = self.osr & ((1 << n) - 1)
                    self.osr >>= n
                else:
                    data = self.osr >> (32 - n)
                    self.osr = (self.osr << n) & MASK
                self.osr_count = min(32, self.osr_count + n)
                if ins[1] == "isr":
                    self.isr, self.isr_count = data, n
                else:
                    setattr(self, ins[1], data)
            elif op == "push":
                if len(self.fifo) < self.FIFO_DEPTH:
                    self.fifo.append(self.isr)
                elif ins[1] != "noblock":
                    raise RuntimeError("push would block: the firmware must use noblock")
                self.isr, self.isr_count = 0, 0
            self.pc = nxt
            self.cycles += 1
