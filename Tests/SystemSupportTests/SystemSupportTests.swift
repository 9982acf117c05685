import Glibc
import Synchronization
import SystemSupport
import TestSupport
import Testing

@Suite(.ownThreads) struct SystemSupportTests {
    @Test func errnoTextIsTheCLibrarys() {
        #expect(SystemError.text(ENOENT) == "No such file or directory")
        #expect(SystemError("open /x", code: EACCES).description == "open /x: Permission denied")
    }

    @Test func filesAreWrittenAtomicallyReadWholeAndRemovedAsATree() throws {
        let dir = try TemporaryDirectory.make("cellpath-system")
        defer { FileSystem.removeTree(dir) }
        try FileSystem.makeDirectories("\(dir)/a/b/c")
        let big = (0 ..< 200_000).map { UInt8(truncatingIfNeeded: $0) }
        try FileSystem.write(big, to: "\(dir)/a/b/c/data", mode: 0o600)
        #expect(try FileSystem.read("\(dir)/a/b/c/data") == big)
        var info = stat()
        #expect(stat("\(dir)/a/b/c/data", &info) == 0 && info.st_mode & 0o777 == 0o600)
        // No temporary file is left beside it.
        #expect(try Spawn.run(["ls", "-A", "\(dir)/a/b/c"]).text == "data\n")
        #expect(throws: SystemError.self) { try FileSystem.read("\(dir)/a/b/c/data", limit: 1000) }
        #expect(symlink("/", "\(dir)/a/root") == 0)
        FileSystem.removeTree(dir)
        #expect(!FileSystem.exists(dir))
        #expect(FileSystem.exists("/etc"))
    }

    /// Two worlds starting and stopping at once: one removes the shared parent while the other
    /// creates its own directory under it.
    @Test func aParentRemovedMeanwhileIsCreatedAgain() throws {
        let dir = try TemporaryDirectory.make("cellpath-system")
        defer { FileSystem.removeTree(dir) }
        let shared = "\(dir)/shared"
        let stop = StopFlag()
        let remover = try Threads.start {
            while !stop.value.load(ordering: .relaxed) {
                rmdir(shared)
                usleep(100)
            }
        }
        var failures: [String] = []
        for round in 0 ..< 3000 {
            let own = "\(shared)/world\(round)"
            do {
                try FileSystem.makeDirectories(own)
                rmdir(own)
            } catch {
                failures.append("\(error)")
            }
        }
        stop.value.store(true, ordering: .relaxed)
        Threads.join(remover)
        #expect(failures.count == 0, "of 3000, the first: \(failures.first ?? "")")
    }

    @Test func readingAMissingFileNamesIt() {
        let error = #expect(throws: SystemError.self) { try FileSystem.read("/nonexistent/cellpath") }
        #expect(error?.code == ENOENT)
        #expect(error?.operation.contains("/nonexistent/cellpath") == true)
    }

    @Test func theRunningExecutableIsTheResolvedProcSelfExe() throws {
        let path = try #require(FileSystem.runningExecutable)
        #expect(path.hasPrefix("/"))
        var info = stat(), viaProc = stat()
        #expect(stat(path, &info) == 0 && stat("/proc/self/exe", &viaProc) == 0)
        #expect(info.st_ino == viaProc.st_ino && info.st_dev == viaProc.st_dev)
    }

    @Test func spawnCapturesOutputAndStatus() throws {
        let ok = try Spawn.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(ok.status == 3)
        #expect(ok.text == "out\nerr\n")
        let killed = try Spawn.run(["sh", "-c", "kill -TERM $$"])
        #expect(killed.status == 128 + SIGTERM)
        #expect(throws: SystemError.self) { try Spawn.run(["/nonexistent/program"]) }
    }

    @Test func childrenInheritNoDescriptorOfOurs() throws {
        // A descriptor opened without close-on-exec, as a C library might.
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let listing = try Spawn.run(["ls", "/proc/self/fd"])
        let open = Set(listing.text.split(separator: "\n").compactMap { Int32($0) })
        #expect(!open.contains(fds[0]) && !open.contains(fds[1]), "inherited: \(open.sorted())")
        #expect(open.isSuperset(of: [0, 1, 2]))
    }

    @Test func pipesAreCloseOnExec() throws {
        let pipe = try FileDescriptor.pipe(nonBlocking: true)
        for fd in [pipe.read.rawValue, pipe.write.rawValue] {
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        }
        let raw = pipe.read.rawValue
        pipe.read.close()
        pipe.read.close()
        #expect(pipe.read.rawValue == -1)
        #expect(fcntl(raw, F_GETFD) == -1 || raw == pipe.write.rawValue)
    }

    @Test func ioWritesAndReadsWholeBuffers() throws {
        let pipe = try FileDescriptor.pipe()
        let payload = Array(repeating: UInt8(0x41), count: 50_000)
        let writer = try Threads.start { [write = pipe.write] in
            try? IO.writeAll(write.rawValue, payload)
            write.close()
        }
        let read = try IO.readAll(pipe.read.rawValue)
        Threads.join(writer)
        #expect(read == payload)
    }

    /// The process has one signal watcher: the tests that install one run on the main actor, one
    /// at a time, even when the others run in parallel.
    @Test @MainActor func signalsReachTheWatcherInOrderWithTheirCount() throws {
        let seen = Mutex<[(Int32, Int)]>([])
        let delivered = WaitableValue(0)
        let watcher = try SignalWatcher(signals: [SIGUSR1, SIGUSR2]) { signal, count in
            seen.withLock { $0.append((signal, count)) }
            delivered.update { $0 += 1 }
        }
        defer { watcher.stop() }
        // Only one watcher at a time.
        #expect(throws: SystemError.self) { try SignalWatcher(signals: [SIGUSR1]) }
        kill(getpid(), SIGUSR1)
        #expect(delivered.wait(until: { $0 >= 1 }, timeout: .seconds(10)) == 1)
        kill(getpid(), SIGUSR2)
        #expect(delivered.wait(until: { $0 >= 2 }, timeout: .seconds(10)) == 2)
        let events = seen.withLock { $0 }
        #expect(events.map(\.0) == [SIGUSR1, SIGUSR2])
        #expect(events.map(\.1) == [1, 2])
    }

    /// `timeout` signals its command and then the command's process group: the same process
    /// sending the same signal again at once is one event; another sender's signal is another.
    @Test @MainActor func aSignalSentAgainAtOnceByTheSameProcessCountsOnce() throws {
        let counts = Mutex<[Int]>([])
        let delivered = WaitableValue(0)
        let watcher = try SignalWatcher(signals: [SIGUSR1]) { _, count in
            counts.withLock { $0.append(count) }
            delivered.update { $0 += 1 }
        }
        defer { watcher.stop() }
        kill(getpid(), SIGUSR1)
        #expect(delivered.wait(until: { $0 >= 1 }, timeout: .seconds(10)) == 1)
        kill(getpid(), SIGUSR1)  // delivered after the first was handled: not merged by the kernel
        let other = try Spawn.run(["kill", "-USR1", String(getpid())])
        #expect(other.status == 0)
        #expect(delivered.wait(until: { $0 >= 2 }, timeout: .seconds(10)) == 2)
        // Everything sent has reached the watcher's pipe by now: no third event follows.
        #expect(delivered.wait(until: { $0 >= 3 }, timeout: .milliseconds(300)) == 2)
        #expect(counts.withLock { $0 } == [1, 2], "the repeat from this process is not counted; kill(1)'s is")
    }

    @Test func aWaitTimesOutWithTheCurrentValue() {
        let value = WaitableValue(1)
        #expect(value.wait(until: { $0 == 2 }, timeout: .milliseconds(20)) == 1)
        value.update { $0 = 2 }
        #expect(value.wait { $0 == 2 } == 2)
    }

    /// Each descriptor of a file shows with its process and number, and goes once closed; a
    /// child's is found too.
    @Test func openDescriptorsOfAFileAreFoundThroughProc() throws {
        let path = "/tmp/cellpath-open-descriptors-\(getpid())"
        try FileSystem.write("", to: path, mode: 0o600)
        defer { unlink(path) }
        #expect(OpenDescriptors.of(path).descriptors == [])
        let first = open(path, O_RDONLY | O_CLOEXEC), second = open(path, O_RDONLY | O_CLOEXEC)
        let own = getpid()
        #expect(
            Set(OpenDescriptors.of(path).descriptors.map(\.fd)) == [first, second]
                && OpenDescriptors.of(path).descriptors.allSatisfy { $0.pid == own })
        close(first)
        #expect(OpenDescriptors.of(path).descriptors.map { [$0.pid, $0.fd] } == [[own, second]])
        close(second)
        let child = try Spawn.start(["sh", "-c", "exec sleep 30 < \(path)"])
        defer { kill(child, SIGKILL); _ = Spawn.wait(child) }
        #expect(
            Poll.until(timeout: .seconds(5)) {
                OpenDescriptors.of(path).descriptors.contains { $0.pid == child && $0.fd == 0 }
            })
    }

    @Test func randomHexAndAddresses() {
        let hex = RandomBytes.hex(16)
        #expect(hex.count == 32 && hex.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(RandomBytes.hex(16) != hex)
        #expect(IPAddress.ipv4Bytes("100.64.23.10") == [100, 64, 23, 10])
        #expect(IPAddress.ipv4Bytes("100.64.23") == nil)
        #expect(IPAddress.ipv4Bytes("256.1.1.1") == nil)
        #expect(IPAddress.ipv6Bytes("2001:db8::1")?.count == 16)
        #expect(IPAddress.isNumeric("::1") && !IPAddress.isNumeric("api.truid.test"))
    }
}

private final class StopFlag: Sendable {
    let value = Atomic(false)
}
