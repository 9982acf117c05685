import Glibc
import SystemSupport
import Testing

@testable import SimulatedModems

/// Who holds a simulated port open: a client that leaves is seen to leave, even when the next
/// one opens the port before the watch has counted.
@Suite struct ClientWatchTests {
    /// A port stand-in (a regular file: inotify and /proc see it as they see a pty), the
    /// simulator's own descriptor of it, and its watch.
    private func withPort(_ body: (String, ClientWatch) throws -> Void) throws {
        var template = Array("/tmp/cellpath-watch.XXXXXX".utf8CString)
        let made = mkstemp(&template)
        try #require(made >= 0)
        close(made)
        let path = String(cString: template)
        defer { unlink(path) }
        let own = open(path, O_RDWR | O_CLOEXEC)
        defer { close(own) }
        let watch = ClientWatch(path: path, ownDescriptor: own)
        defer { watch.close() }
        try body(path, watch)
    }

    @Test func aClientThatLeftIsSeenToLeave() throws {
        try withPort { path, watch in
            let client = open(path, O_RDWR | O_CLOEXEC)
            #expect(!watch.drain())
            #expect(watch.clients == 1)
            close(client)
            #expect(watch.drain(), "the last client closed the port")
            #expect(watch.nobodyListening)
        }
    }

    /// The next client opens the port after the watch read the close, before it counted the
    /// holders: the count then holds the new client, whose open event is still to be read.
    @Test func aClientOpeningWhileTheWatchCountsDoesNotHideTheOneThatLeft() throws {
        try withPort { path, watch in
            let first = open(path, O_RDWR | O_CLOEXEC)
            #expect(!watch.drain())
            close(first)
            var next: Int32 = -1
            watch.beforeCount = {
                if next < 0 { next = open(path, O_RDWR | O_CLOEXEC) }
            }
            #expect(watch.drain(), "the first client left before the next came")
            #expect(next >= 0)
            #expect(watch.clients == 1, "the next client holds it")
            watch.beforeCount = nil
            close(next)
            #expect(watch.drain())
            #expect(watch.nobodyListening)
        }
    }
}
