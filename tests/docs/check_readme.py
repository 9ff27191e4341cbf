#!/usr/bin/python3
"""Compiles, runs or checks every code sample of README.md.

    tests/docs/check_readme.py SOURCE_DIR BUILD_DIR [--readme FILE] [--verbose]

ctest runs it as docs.ReadmeSamples (tests/docs/CMakeLists.txt) against the
plain build: BUILD_DIR/libtally.so, BUILD_DIR/include (tally/version.h) and
BUILD_DIR/tools/counterctl. Every fenced block of the README is handled by
its info string, in document order, each in a fresh temporary directory
(the current directory of what it runs); a block with any other info
string (or none) fails the check, so nothing is shown that is not checked.

```cpp   a complete program: compiled with
         c++ -std=c++17 -Wall -Werror -I SOURCE_DIR/include
             -I BUILD_DIR/include FILE BUILD_DIR/libtally.so
             -Wl,-rpath,BUILD_DIR -pthread
         and run as `./PROGRAM DB`, DB a path that does not exist yet (a
         program may take its database's path from argv[1]); it must exit 0.
```c     the same with cc -std=c11 -Wall -Werror.
```python  run as `python3 FILE DB` with TALLY_LIBRARY=BUILD_DIR/libtally.so
         and PYTHONPATH=SOURCE_DIR/bindings/python; exit 0. Skipped, saying
         so, only when bindings/python is not in SOURCE_DIR.
```cmake  a consumer's CMakeLists.txt: its add_executable(NAME SOURCES)
         names programs shown above (see "File names"); BUILD_DIR is
         installed into a temporary prefix (its install manifest goes there
         too: the build tree is not written), the project is configured
         against it (CMAKE_PREFIX_PATH), built, and NAME run as `./NAME DB`.
```sh    shell lines, one command each (no `\\` continuations):
         - a line starting with `counterctl ` is run through bash, in order,
           with BUILD_DIR/tools first on PATH, LC_ALL=C, TZ=UTC, no TALLY_DB,
           HOME inside the temporary directory and stdin empty; its trailing
           `# comment` is prose, except `# exit N` or `# exit N: why`: then
           it must exit N, else 0;
         - `cat > FILE <<'EOF'` up to a line `EOF` writes FILE (an input a
           later command reads);
         - any other line is NOT run (an install, a build, a script of the
           repository): it is checked against what the repository supports
           (check_words below): a cmake -D option is declared in
           CMakeLists.txt or cmake/*.cmake, `./scripts/dev X` is a case of
           scripts/dev, apt-get packages are in scripts/dev's PACKAGES, a
           pkg-config module has its cmake/NAME.pc.in, a path exists, a
           counterctl command piped or substituted into it has its
           subcommand and options (or, with no database, runs), ... A
           command the checker does not know fails the check.
```text   the expected stdout of the nearest code block above it (no other
         fenced block between them; prose may be): the program's, or the
         counterctl lines' of an sh block, concatenated. Compared exactly,
         byte for byte: a sample that shows output must print the same on
         every run (no times, pids or random shards in it).

File names. A program block may name its file in its first line, as a
comment: `// first.cc: ...`, `# first.py: ...`; the shell lines and cmake
blocks refer to programs by those names (`c++ first.cc ...`, `./first`).
Unnamed blocks are block<LINE>.<ext>.

Output: one line per block (what was compiled, run or checked); on the
first failure a message naming the README line, the command and its
output, and exit status 1. --verbose prints every command's output too.
"""

import argparse
import difflib
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

COMMAND_TIMEOUT_S = 120
EXTENSIONS = {"cpp": ".cc", "c": ".c", "python": ".py"}
KNOWN = {"cpp", "c", "python", "cmake", "sh", "text"}
# Shell commands outside the repository whose arguments name nothing of it:
# allowed in non-run lines as they are (a `tail -f` feeding counterctl).
NEUTRAL = {"tail", "source", "cat"}


class Failure(Exception):
    pass


class Block:
    def __init__(self, info, line, lines):
        self.info = info        # the info string's first word
        self.line = line        # the line of the opening fence (1-based)
        self.lines = lines      # the block's lines, without the fences
        self.output = None      # the Block of its ```text, if any

    @property
    def text(self):
        return "".join(l + "\n" for l in self.lines)


def parse_blocks(text):
    blocks, open_block = [], None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^(`{3,})(.*)$", line)
        if open_block is None:
            if m:
                info = m.group(2).strip().split()
                open_block = (m.group(1), info[0] if info else "", n, [])
        elif m and m.group(1) == open_block[0] and not m.group(2).strip():
            blocks.append(Block(open_block[1], open_block[2], open_block[3]))
            open_block = None
        else:
            open_block[3].append(line)
    if open_block is not None:
        raise Failure("%d: a ``` block is never closed" % open_block[2])
    # Each ```text block is the output of the block above it.
    code = []
    for b in blocks:
        if b.info not in KNOWN:
            raise Failure("%d: a ``` block with info string %r: the "
                          "checker knows %s; every code sample must be "
                          "compiled, run or checked" %
                          (b.line, b.info, ", ".join(sorted(KNOWN))))
        if b.info == "text":
            prev = code[-1] if code else None
            if prev is None or prev.info == "text" or prev.output:
                raise Failure("%d: a ```text block (an output) must "
                              "follow the code block whose output it is" %
                              b.line)
            prev.output = b
        code.append(b)
    return [b for b in blocks if b.info != "text"]


def split_comment(line):
    """(command, comment) at the first `#` outside quotes that starts a
    word."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


class Checker:
    def __init__(self, src, build, readme, verbose):
        self.src = os.path.abspath(src)
        self.build = os.path.abspath(build)
        self.readme = readme
        self.verbose = verbose
        self.name = os.path.relpath(readme, self.src) \
            if readme.startswith(self.src) else readme
        self.lib = os.path.join(self.build, "libtally.so")
        self.tools = os.path.join(self.build, "tools")
        self.counterctl = os.path.join(self.tools, "counterctl")
        self.programs = {}   # file name -> its source text
        self.built = set()   # programs the README builds (-o, add_executable)
        self.prefix = None   # the temporary install of BUILD_DIR
        self.no_python = not os.path.isdir(os.path.join(
            self.src, "bindings", "python", "tally"))
        self.skipped = []    # lines of the current block not checked
        self.scratch = tempfile.mkdtemp(prefix="check_readme.")
        for what, path in (("libtally.so", self.lib),
                           ("counterctl", self.counterctl),
                           ("tally/version.h", os.path.join(
                               self.build, "include", "tally", "version.h"))):
            if not os.path.exists(path):
                raise Failure("%s has no %s (%s): build the targets tally "
                              "and counterctl first" % (self.build, what,
                                                        path))

    # ---------------------------------------------------------------- helpers

    def where(self, block, offset=None):
        line = block.line + (offset + 1 if offset is not None else 0)
        return "%s:%d" % (self.name, line)

    def fresh_dir(self):
        return tempfile.mkdtemp(dir=self.scratch)

    def env(self, home):
        env = dict(os.environ)
        env.pop("TALLY_DB", None)
        env.update(PATH=self.tools + os.pathsep + env.get("PATH", ""),
                   LC_ALL="C", TZ="UTC", HOME=home, TMPDIR=home,
                   PYTHONDONTWRITEBYTECODE="1")
        return env

    def run(self, argv, where, cwd, env=None, expect=0, shell=False):
        shown = argv if shell else " ".join(shlex.quote(a) for a in argv)
        try:
            p = subprocess.run(["bash", "-c", argv] if shell else argv,
                               cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True,
                               timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Failure("%s: `%s` ran past %d s" % (where, shown,
                                                      COMMAND_TIMEOUT_S))
        except OSError as e:
            raise Failure("%s: `%s` did not start: %s" % (where, shown, e))
        if self.verbose:
            print("  $ %s  (exit %d)" % (shown, p.returncode))
            for l in (p.stdout + p.stderr).splitlines():
                print("    " + l)
        if p.returncode != expect:
            raise Failure("%s: `%s` exited %d, not %d\n--- stdout\n%s--- "
                          "stderr\n%s" % (where, shown, p.returncode, expect,
                                          p.stdout, p.stderr))
        return p.stdout

    def compare(self, block, actual):
        if block.output is None:
            return ""
        expected = block.output.text
        if actual == expected:
            return ", output matches (%d lines)" % len(block.output.lines)
        diff = "".join(difflib.unified_diff(
            expected.splitlines(True), actual.splitlines(True),
            "README (line %d)" % block.output.line, "what it printed"))
        raise Failure("%s: the output differs from the ```text block at "
                      "line %d:\n%s" % (self.where(block), block.output.line,
                                        diff))

    def file_name(self, block):
        first = block.lines[0] if block.lines else ""
        m = re.match(r"^\s*(?://|/\*|#)\s*([\w.-]+%s):" %
                     re.escape(EXTENSIONS[block.info]), first)
        return m.group(1) if m else "block%d%s" % (block.line,
                                                   EXTENSIONS[block.info])

    # ---------------------------------------------------------------- blocks

    def program(self, block):
        name = self.file_name(block)
        self.programs[name] = block.text
        work = self.fresh_dir()
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(block.text)
        db = os.path.join(work, "db")
        if block.info == "python":
            if self.no_python:
                return "skipped: bindings/python not there"
            env = self.env(work)
            env.update(TALLY_LIBRARY=self.lib, PYTHONPATH=os.path.join(
                self.src, "bindings", "python"))
            out = self.run([sys.executable, name, db], self.where(block),
                           work, env)
            return "ran %s%s" % (name, self.compare(block, out))
        exe = os.path.join(work, os.path.splitext(name)[0])
        compiler = (["c++", "-std=c++17"] if block.info == "cpp"
                    else ["cc", "-std=c11"])
        self.run(compiler + ["-Wall", "-Werror",
                             "-I", os.path.join(self.src, "include"),
                             "-I", os.path.join(self.build, "include"),
                             path, self.lib, "-Wl,-rpath," + self.build,
                             "-pthread", "-o", exe],
                 self.where(block), work)
        out = self.run([exe, db], self.where(block), work, self.env(work))
        return "compiled and ran %s%s" % (name, self.compare(block, out))

    def install(self, where):
        """Installs BUILD_DIR into a temporary prefix, once. cmake --install
        writes its manifest into the build tree; its script is run from a
        copy that writes the manifest beside the prefix instead."""
        if self.prefix:
            return self.prefix
        root = self.fresh_dir()
        prefix = os.path.join(root, "prefix")
        with open(os.path.join(self.build, "cmake_install.cmake")) as f:
            script = f.read()
        script, n = re.subn(r'file\(WRITE "[^"]*/\$\{CMAKE_INSTALL_MANIFEST\}"',
                            'file(WRITE "%s/${CMAKE_INSTALL_MANIFEST}"' % root,
                            script)
        if n != 1:
            raise Failure("%s: cannot find where %s/cmake_install.cmake "
                          "writes its manifest" % (where, self.build))
        with open(os.path.join(root, "cmake_install.cmake"), "w") as f:
            f.write(script)
        self.run(["cmake", "-DCMAKE_INSTALL_PREFIX=" + prefix, "-P",
                  os.path.join(root, "cmake_install.cmake")], where, root)
        self.prefix = prefix
        return prefix

    def cmake(self, block):
        m = re.search(r"add_executable\(\s*([\w-]+)\s+([^)]*)\)", block.text)
        if not m:
            raise Failure("%s: a ```cmake block without add_executable"
                          % self.where(block))
        exe, sources = m.group(1), m.group(2).split()
        work = self.fresh_dir()
        for s in sources:
            if s not in self.programs:
                raise Failure("%s: add_executable names %s, which no program "
                              "block above is (name it in its first line: "
                              "`// %s: ...`)" % (self.where(block), s, s))
            with open(os.path.join(work, s), "w") as f:
                f.write(self.programs[s])
        with open(os.path.join(work, "CMakeLists.txt"), "w") as f:
            f.write(block.text)
        prefix = self.install(self.where(block))
        self.run(["cmake", "-S", work, "-B", os.path.join(work, "build"),
                  "-DCMAKE_PREFIX_PATH=" + prefix,
                  "-DCMAKE_BUILD_TYPE=Release"], self.where(block), work)
        self.run(["cmake", "--build", os.path.join(work, "build")],
                 self.where(block), work)
        self.built.add(exe)
        libdirs = sorted(set(os.path.dirname(p) for p in glob.glob(
            os.path.join(prefix, "lib*", "**", "libtally.so*"),
            recursive=True)))
        env = self.env(work)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(libdirs)
        out = self.run([os.path.join(work, "build", exe),
                        os.path.join(work, "db")], self.where(block), work, env)
        return ("built %s with find_package(tally) against an install of "
                "the build, ran it%s" % (exe, self.compare(block, out)))

    def sh(self, block):
        work = self.fresh_dir()
        env = self.env(work)
        ran, checked, out = 0, [], ""
        self.skipped = []
        lines = block.lines
        i = 0
        while i < len(lines):
            line, where = lines[i].strip(), self.where(block, i)
            i += 1
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^cat > ([\w.-]+) <<'?(\w+)'?$", line)
            if m:
                body = []
                while i < len(lines) and lines[i] != m.group(2):
                    body.append(lines[i] + "\n")
                    i += 1
                if i == len(lines):
                    raise Failure("%s: here-document never ends (%s)" %
                                  (where, m.group(2)))
                i += 1
                with open(os.path.join(work, m.group(1)), "w") as f:
                    f.write("".join(body))
                checked.append("wrote " + m.group(1))
                continue
            command, comment = split_comment(line)
            if command.startswith("counterctl "):
                e = re.match(r"^exit (\d+)(?::|$)", comment)
                out += self.run(command, where, work, env,
                                expect=int(e.group(1)) if e else 0,
                                shell=True)
                ran += 1
            else:
                skipped = len(self.skipped)
                self.check_shell(command, where)
                if len(self.skipped) == skipped:
                    checked.append(command.split()[0])
        if block.output is not None and not ran:
            raise Failure("%s: a ```text output after a block that runs "
                          "nothing" % self.where(block))
        parts = []
        if ran:
            parts.append("ran %d counterctl commands%s" %
                         (ran, self.compare(block, out)))
        if checked:
            parts.append("checked %d other line%s (%s)" %
                         (len(checked), "s" if len(checked) > 1 else "",
                          ", ".join(sorted(set(checked)))))
        if self.skipped:
            parts.append("skipped %d line%s about the Python package "
                         "(bindings/python not there)" %
                         (len(self.skipped),
                          "s" if len(self.skipped) > 1 else ""))
        return "; ".join(parts) or "empty"

    # ------------------------------------------------ lines that are not run

    def declared_cmake_options(self):
        names = set()
        files = [os.path.join(self.src, "CMakeLists.txt")] + glob.glob(
            os.path.join(self.src, "cmake", "*.cmake"))
        for path in files:
            with open(path) as f:
                text = f.read()
            names.update(re.findall(r"\boption\(\s*(\w+)", text))
            names.update(re.findall(r"\bset\(\s*(\w+)\s[^)]*\bCACHE\b", text))
        return names

    def dev_script(self):
        with open(os.path.join(self.src, "scripts", "dev")) as f:
            text = f.read()
        m = re.search(r'case "\$\{1:-\}" in\n(.*?)\nesac', text, re.S)
        cases = set(re.findall(r"^\s+([\w|-]+)\)", m.group(1), re.M)) \
            if m else set()
        cases = {c for alt in cases for c in alt.split("|")}
        p = re.search(r"^PACKAGES=\((.*?)\)", text, re.S | re.M)
        packages = set(p.group(1).split()) if p else set()
        return cases, packages, text

    def check_path(self, path, where, what="path"):
        if "*" in path or "$" in path:
            return
        rel = os.path.normpath(path)
        if rel.startswith("build" + os.sep) or rel == "build":
            return  # made by the commands above, not part of the repository
        if not os.path.exists(os.path.join(self.src, rel)):
            raise Failure("%s: names the %s %s, which is not in the "
                          "repository" % (where, what, path))

    def check_counterctl(self, words, where):
        """A counterctl command in a line that is not run: with no database
        it only prints (completion, man), so it is run; else its subcommand
        must exist and take every option it is given."""
        args, has_db, k = [], False, 0
        while k < len(words):
            w = words[k]
            if w in ("--db", "-d"):
                has_db, k = True, k + 2
                continue
            if w.startswith("--db="):
                has_db = True
            elif w not in ("-q", "--quiet"):
                args.append(w)
            k += 1
        if not has_db:
            self.run([self.counterctl] + args, where, self.scratch,
                     self.env(self.scratch))
            return
        sub = []
        for w in args:
            if w.startswith("-"):
                break
            sub.append(w)
        helps = self.run([self.counterctl] + sub[:2] + ["--help"], where,
                         self.scratch, self.env(self.scratch))
        if sub[1:2] and not re.search(r"Usage: counterctl %s" %
                                      re.escape(" ".join(sub[:2])), helps):
            helps = self.run([self.counterctl] + sub[:1] + ["--help"], where,
                             self.scratch, self.env(self.scratch))
        for w in args:
            if w.startswith("-") and w != "-":
                opt = w.split("=", 1)[0]
                if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt),
                                 helps):
                    raise Failure("%s: counterctl %s has no option %s" %
                                  (where, " ".join(sub), opt))

    def check_shell(self, command, where):
        """Checks a shell line that is not run (see the module's doc)."""
        subs = re.findall(r"<\(([^)]*)\)", command)
        rest = re.sub(r"<\([^)]*\)", "PROCESS_SUBSTITUTION", command)
        for segment in subs + re.split(r"\|\||&&|\||;", rest):
            try:
                words = shlex.split(segment)
            except ValueError as e:
                raise Failure("%s: cannot parse `%s`: %s" % (where, segment,
                                                             e))
            while words and re.match(r"^\w+=", words[0]):
                words.pop(0)  # VAR=value before a command
            if words:
                self.check_words(words, where)

    def check_words(self, words, where):
        cmd = words[0]
        base = os.path.basename(cmd)
        if cmd == "counterctl":
            self.check_counterctl(words[1:], where)
        elif cmd == "cmake":
            self.check_cmake(words[1:], where)
        elif cmd == "cpack":
            for k, w in enumerate(words):
                if w == "--config":
                    cfg = words[k + 1]
                    if not cfg.startswith("build/") or not os.path.exists(
                            os.path.join(self.build, cfg[len("build/"):])):
                        raise Failure("%s: cpack --config %s: the build has "
                                      "no such file" % (where, cfg))
        elif cmd == "apt-get":
            _, packages, _ = self.dev_script()
            action = [w for w in words[1:] if not w.startswith("-")]
            if action[:1] == ["update"]:
                return
            if action[:1] != ["install"]:
                raise Failure("%s: apt-get %s: only update and install are "
                              "checked" % (where, " ".join(action[:1])))
            for p in action[1:]:
                if p.startswith(("./", "/")):
                    self.check_path(p, where)
                elif p not in packages:
                    raise Failure("%s: apt-get install %s: not one of "
                                  "scripts/dev's PACKAGES" % (where, p))
        elif cmd == "./scripts/dev":
            cases, _, text = self.dev_script()
            if len(words) < 2 or words[1] not in cases:
                raise Failure("%s: ./scripts/dev %s: not a case of "
                              "scripts/dev (%s)" % (where, " ".join(words[1:]),
                                                    ", ".join(sorted(cases))))
            if words[1] == "bench" and len(words) > 2 and not re.search(
                    r"bench \[[^]]*\b%s\b" % re.escape(words[2]), text):
                raise Failure("%s: ./scripts/dev bench %s: scripts/dev's "
                              "usage has no such mode" % (where, words[2]))
        elif self.no_python and (base == "pip" or cmd == "export" or
                                 words[:3] == ["python3", "-m", "pip"]):
            self.skipped.append(cmd)  # about the package that is not there
        elif base == "pip" or words[:3] == ["python3", "-m", "pip"]:
            args = words[1:] if base == "pip" else words[3:]
            if args[:1] != ["install"]:
                raise Failure("%s: pip %s: only install is checked" %
                              (where, " ".join(args[:1])))
            for a in args[1:]:
                if not a.startswith("-"):
                    self.check_path(os.path.join(a, "pyproject.toml"), where,
                                    "Python package")
        elif base in ("python3", "python"):
            if words[1:3] == ["-m", "venv"]:
                return
            script = next((w for w in words[1:] if not w.startswith("-")), "")
            if script not in self.programs:
                raise Failure("%s: %s %s: not a program shown above" %
                              (where, cmd, script))
        elif cmd == "export":
            for w in words[1:]:
                name = w.split("=", 1)[0]
                self.check_variable(name, where)
        elif cmd == "ldconfig":
            if len(words) > 1:
                raise Failure("%s: ldconfig with arguments: not checked" %
                              where)
        elif cmd in ("c++", "cc", "g++", "gcc"):
            self.check_compile(words, where)
        elif cmd.startswith("./") or cmd.startswith("build"):
            if base in self.built or (os.path.exists(
                    os.path.join(self.src, cmd)) and not cmd.startswith(
                        "build")):
                return
            if cmd.startswith("build/") and os.path.exists(
                    os.path.join(self.build, cmd[len("build/"):])):
                return
            raise Failure("%s: runs %s, which neither the repository nor "
                          "a command above makes" % (where, cmd))
        elif cmd in NEUTRAL or cmd == "PROCESS_SUBSTITUTION":
            if cmd == "cat" and len(words) > 1:
                raise Failure("%s: cat with arguments outside a here-document"
                              ": not checked" % where)
        else:
            raise Failure("%s: the checker does not know how to check `%s` "
                          "(tests/docs/check_readme.py, check_words)" %
                          (where, " ".join(words)))

    def check_cmake(self, args, where):
        options = self.declared_cmake_options()
        k = 0
        while k < len(args):
            a = args[k]
            if a in ("-S",):
                self.check_path(args[k + 1], where, "source directory")
                k += 2
                continue
            if a.startswith("-D"):
                name = a[2:].split("=", 1)[0].split(":", 1)[0]
                if not name.startswith("CMAKE_") and name not in options:
                    raise Failure("%s: cmake -D%s: no option(%s) or cache "
                                  "variable in CMakeLists.txt or cmake/*.cmake"
                                  % (where, name, name))
            k += 1

    def check_variable(self, name, where):
        for path in glob.glob(os.path.join(self.src, "bindings", "python",
                                           "tally", "*.py")):
            with open(path) as f:
                if re.search(r"\b%s\b" % re.escape(name), f.read()):
                    return
        raise Failure("%s: export %s: the Python package does not read it" %
                      (where, name))

    def check_compile(self, words, where):
        line = " ".join(words)
        for w in words[1:]:
            if re.search(r"\.(cc|c|cpp)$", w) and w not in self.programs:
                raise Failure("%s: compiles %s, which is no program shown "
                              "above" % (where, w))
        for k, w in enumerate(words):
            if w == "-o" and k + 1 < len(words):
                self.built.add(os.path.basename(words[k + 1]))
        for m in re.finditer(r"pkg-config ((?:--[\w-]+ )*)([\w-]+)", line):
            module = m.group(2)
            if not os.path.exists(os.path.join(self.src, "cmake",
                                               module + ".pc.in")):
                raise Failure("%s: pkg-config %s: no cmake/%s.pc.in" %
                              (where, module, module))

    # ---------------------------------------------------------------- main

    def check(self):
        with open(self.readme, encoding="utf-8") as f:
            try:
                blocks = parse_blocks(f.read())
            except Failure as e:
                raise Failure("%s:%s" % (self.name, e))
        handlers = {"cpp": self.program, "c": self.program,
                    "python": self.program, "cmake": self.cmake, "sh": self.sh}
        skipped = 0
        for b in blocks:
            if self.verbose:
                print("%s: ```%s" % (self.where(b), b.info))
            what = handlers[b.info](b)
            if what.startswith("skipped"):
                skipped += 1
            print("%s ```%s: %s" % (self.where(b), b.info, what))
            sys.stdout.flush()
        print("%s: %d code blocks, all compiled, run or checked%s" %
              (self.name, len(blocks),
               " but %d skipped" % skipped if skipped else ""))

    def close(self):
        shutil.rmtree(self.scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source_dir")
    ap.add_argument("build_dir")
    ap.add_argument("--readme", help="the README to check (default: "
                    "SOURCE_DIR/README.md)")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    readme = a.readme or os.path.join(a.source_dir, "README.md")
    checker = None
    try:
        checker = Checker(a.source_dir, a.build_dir, os.path.abspath(readme),
                          a.verbose)
        checker.check()
    except Failure as e:
        print("check_readme: FAILED: %s" % e)
        return 1
    finally:
        if checker:
            checker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
