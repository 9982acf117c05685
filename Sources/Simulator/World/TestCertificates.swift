import CellpathCore
import Glibc
import SystemSupport

/// Makes the world's test CA and the fake API's server certificate with the openssl CLI,
/// under the run directory only (nothing goes into the system trust store). Blocking.
enum TestCertificates {
    /// Creates `tls/ca.pem`, `tls/ca.key`, `tls/server.pem` (server certificate then CA) and
    /// `tls/server.key` for api.truid.test and operator.camara.test (and their address), valid for 30 days.
    static func make(in run: RunDirectory) throws {
        let dir = "\(run.path)/tls"
        try FileSystem.makeDirectories(dir, mode: 0o700)
        let ext = "\(dir)/server.ext"
        try FileSystem.write(
            """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature, keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = \(WorldTopology.apiHosts.map { "DNS:" + $0 }.joined(separator: ", ")), IP:\(WorldTopology.apiAddress), IP:\(WorldTopology.apiIPv6Address)

            """, to: ext)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Subprocess.check(
            ["openssl", "req", "-x509"] + key + [
                "-keyout", run.caKey, "-out", run.caCertificate, "-days", "30", "-sha256",
                "-subj", "/O=cellpath simulator/CN=cellpath sim test CA \(run.path.split(separator: "/").last ?? "")",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
            ])
        let csr = "\(dir)/server.csr", leaf = "\(dir)/server-leaf.pem"
        try Subprocess.check(
            ["openssl", "req", "-new"] + key + [
                "-keyout", run.serverKey, "-out", csr, "-subj", "/O=cellpath simulator/CN=\(WorldTopology.apiHost)"
            ])
        try Subprocess.check([
            "openssl", "x509", "-req", "-in", csr, "-CA", run.caCertificate, "-CAkey", run.caKey,
            "-CAcreateserial", "-out", leaf, "-days", "30", "-sha256", "-extfile", ext
        ])
        guard let leafPEM = try? FileSystem.read(leaf), let caPEM = try? FileSystem.read(run.caCertificate) else {
            throw CellpathError(.unavailable, "openssl did not write the certificates in \(dir)")
        }
        try FileSystem.write(leafPEM + caPEM, to: run.serverCertificate)
        for file in [csr, leaf, ext, "\(dir)/ca.srl"] { unlink(file) }
        chmod(run.caKey, 0o600)
        chmod(run.serverKey, 0o600)
        // The CA certificate is public: every user in the world (`sim exec -- setpriv …`) must
        // read it, whatever the umask; the keys beside it stay root's.
        chmod(run.caCertificate, 0o644)
        for directory in [RunDirectory.root, run.path, dir] { chmod(directory, 0o755) }
    }
}
