import Glibc
import SystemSupport

/// A raw client on a simulated modem's control port: writes bytes, reads with a deadline.
final class RawPort {
    private(set) var fd: Int32

    init(_ path: String) throws {
        fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw RawPortError.open(errno) }
    }

    deinit { close() }

    /// Closes the port now (once).
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Reads until `complete` holds of what arrived (by default: anything), waiting `timeout` seconds
    /// at most for it, then whatever follows within `settle` seconds of the last bytes.
    func receive(
        timeout: Double = 1.0, settle: Double = 0.15,
        until complete: ([UInt8]) -> Bool = { !$0.isEmpty }
    ) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = MonotonicClock.now + timeout
        while true {
            // What the caller waits for, up to `timeout` in all; then whatever follows within `settle`.
            let wait = complete(out) ? settle : max(0, deadline - MonotonicClock.now)
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(wait * 1000)) > 0 else { break }
            if p.revents & Int16(POLLHUP | POLLERR) != 0 && p.revents & Int16(POLLIN) == 0 { break }
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            out += buffer[0 ..< n]
        }
        return out
    }

    /// Whether the port reports a hang-up (the device went away).
    func hungUp(timeout: Double = 1.0) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) > 0 else { return false }
        if p.revents & Int16(POLLHUP | POLLERR) != 0 { return true }
        var byte: UInt8 = 0
        return read(fd, &byte, 1) < 0
    }
}

enum RawPortError: Error { case open(Int32) }

/// Little-endian helpers for building and reading frames in tests.
func le32(_ v: UInt32) -> [UInt8] { (0 ..< 4).map { UInt8((v >> UInt32(8 * $0)) & 0xff) } }
func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8)] }
func readLE32(_ b: [UInt8], _ o: Int) -> UInt32 { (0 ..< 4).reduce(0) { $0 | UInt32(b[o + $1]) << UInt32(8 * $1) } }
func readLE16(_ b: [UInt8], _ o: Int) -> UInt16 { UInt16(b[o]) | UInt16(b[o + 1]) << 8 }

/// Splits a byte stream of MBIM messages at their length fields.
func mbimMessages(_ bytes: [UInt8]) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var o = 0
    while o + 12 <= bytes.count {
        let n = Int(readLE32(bytes, o + 4))
        guard n >= 12, o + n <= bytes.count else { break }
        out.append(Array(bytes[o ..< (o + n)]))
        o += n
    }
    return out
}

enum MBIMTestFrames {
    static let basicConnect: [UInt8] = [
        0xa2, 0x89, 0xcc, 0x33, 0xbc, 0xbb, 0x8b, 0x4f,
        0xb6, 0xb0, 0x13, 0x3e, 0xc2, 0xaa, 0xe6, 0xdf
    ]
    static func open(tid: UInt32, maxTransfer: UInt32 = 4096) -> [UInt8] {
        le32(1) + le32(16) + le32(tid) + le32(maxTransfer)
    }
    static func close(tid: UInt32) -> [UInt8] { le32(2) + le32(12) + le32(tid) }
    /// A single-fragment COMMAND.
    static func command(tid: UInt32, cid: UInt32, set: Bool = false, info: [UInt8] = []) -> [UInt8] {
        let body = le32(1) + le32(0) + basicConnect + le32(cid) + le32(set ? 1 : 0) + le32(UInt32(info.count)) + info
        return le32(3) + le32(UInt32(12 + body.count)) + le32(tid) + body
    }
    /// CONNECT set activating session 0 on "internet" (IPv4).
    /// A connect (activate) of session 0 on APN `internet` with MBIM_CONTEXT_IP_TYPE `ipType`.
    static func connect(tid: UInt32, ipType: UInt32 = 1) -> [UInt8] {
        let apn: [UInt8] = Array("internet".utf16).flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] }
        var info = le32(0) + le32(1) + le32(60) + le32(UInt32(apn.count))
        info += le32(0) + le32(0) + le32(0) + le32(0) + le32(0) + le32(0) + le32(ipType)
        info += [0x7e, 0x5e, 0x2a, 0x7e, 0x4e, 0x6f, 0x72, 0x72, 0x73, 0x6b, 0x65, 0x6e, 0x7e, 0x5e, 0x2a, 0x7e]
        return command(tid: tid, cid: 12, set: true, info: info + apn)
    }
}

/// QMUX frames for raw QMI tests.
enum QMITestFrames {
    static func ctl(tid: UInt8, message: UInt16, tlvs: [(UInt8, [UInt8])] = []) -> [UInt8] {
        let body = tlvs.flatMap { [$0.0] + le16(UInt16($0.1.count)) + $0.1 }
        let sdu: [UInt8] = [0x00, tid] + le16(message) + le16(UInt16(body.count)) + body
        return [0x01] + le16(UInt16(5 + sdu.count)) + [0x00, 0x00, 0x00] + sdu
    }
    static func service(
        _ service: UInt8, cid: UInt8, tid: UInt16, message: UInt16, tlvs: [(UInt8, [UInt8])] = []
    ) -> [UInt8] {
        let body = tlvs.flatMap { [$0.0] + le16(UInt16($0.1.count)) + $0.1 }
        let sdu: [UInt8] = [0x00] + le16(tid) + le16(message) + le16(UInt16(body.count)) + body
        return [0x01] + le16(UInt16(5 + sdu.count)) + [0x00, service, cid] + sdu
    }
}

/// A parsed QMUX frame from the modem.
struct QMIFrame {
    var service: UInt8, clientID: UInt8, flags: UInt8, messageID: UInt16
    var tlvs: [UInt8: [UInt8]]
    /// The result TLV's error code (0 = success), if present.
    var error: UInt16? { tlvs[0x02].map { readLE16($0, 2) } }
}

/// Splits a byte stream of QMUX frames.
func qmiFrames(_ bytes: [UInt8]) -> [QMIFrame] {
    var out: [QMIFrame] = []
    var o = 0
    while o + 3 <= bytes.count, bytes[o] == 0x01 {
        let n = Int(readLE16(bytes, o + 1)) + 1
        guard o + n <= bytes.count else { break }
        let f = Array(bytes[o ..< (o + n)])
        let ctl = f[4] == 0
        let header = ctl ? 12 : 13
        if f.count >= header {
            var tlvs: [UInt8: [UInt8]] = [:]
            var p = header
            while p + 3 <= f.count {
                let len = Int(readLE16(f, p + 1))
                guard p + 3 + len <= f.count else { break }
                tlvs[f[p]] = Array(f[(p + 3) ..< (p + 3 + len)])
                p += 3 + len
            }
            out.append(
                QMIFrame(service: f[4], clientID: f[5], flags: f[6], messageID: readLE16(f, ctl ? 8 : 9), tlvs: tlvs))
        }
        o += n
    }
    return out
}
