import CellpathCore
import Glibc
import ModemDiscovery
import Modems
import SystemSupport

/// A modem that re-enumerated under another physical device path (another USB port, another
/// PCI address) finds the record it left under the old one by its IMEI, the record's second
/// identity, as long as the old device is gone.
extension BearerRecords {
    /// `load(for:)`, or else the record of a device that no longer exists whose IMEI is the one
    /// `imei` reads (asked only when such a record exists), moved to `modem`'s name and
    /// validated as its own.
    public func load(
        for modem: DiscoveredModem, imei: () async -> String?
    ) async throws(CellpathError) -> BearerRecord? {
        if let record = try load(for: modem) { return record }
        let orphans = orphanedRecords(besides: modem)
        guard !orphans.isEmpty, let imei = await imei(), BearerRecord.isIMEI(imei) else { return nil }
        guard let orphan = orphans.first(where: { $0.imei == imei }),
            let record = try load(at: orphan.path, for: modem, movedFrom: orphan.device)
        else { return nil }
        try save(record)
        unlink(orphan.path)
        return record
    }

    /// `load(for:imei:)` with the IMEI that `backend` reads (nil when it reads none).
    public func load(
        for modem: DiscoveredModem, reading backend: any ModemBackend
    ) async throws(CellpathError) -> BearerRecord? {
        try await load(for: modem) { () async -> String? in try? await backend.identity().imei }
    }

    /// The records in the directory, other than `modem`'s, that name a physical device that no
    /// longer exists and an IMEI: their file, device and IMEI, read without acting on them.
    func orphanedRecords(besides modem: DiscoveredModem) -> [(path: String, device: String, imei: String)] {
        let own = path(for: modem)
        return (FileSystem.entries(directory) ?? []).sorted().compactMap { name in
            let path = "\(directory)/\(name)"
            guard name.hasPrefix("bearer-"), name.hasSuffix(".json"), path != own,
                let bytes = try? FileSystem.read(path, limit: 1 << 20),
                let record = try? JSONDecoding.decode(BearerRecord.self, from: bytes),
                let device = record.device, let imei = record.imei, !FileSystem.exists(device)
            else { return nil }
            return (path, device, imei)
        }
    }
}
