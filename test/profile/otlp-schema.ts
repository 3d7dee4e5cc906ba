// An independent decoder for the OTLP Profiles request, for tests only.
//
// The official .proto files of opentelemetry-proto v1.11.0 may not be
// committed here and cannot be downloaded at test time (no network but the
// npm and Debian registries, and no npm package ships the v1development
// profiles protos). So this schema is written by hand from the field list in
// shared/FORMATS.md, decoded by protobufjs (not our writer), and the tests
// cross-check the same bytes with `protoc --decode_raw`. When
// OTLP_PROTO_DIR points at a checkout of the official protos (tag v1.11.0),
// the tests also decode with `protoc --decode` against them.
import protobuf from 'protobufjs';

const SCHEMA = `
syntax = "proto3";
package sf.test;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    bytes bytes_value = 7;
  }
}
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }

message Request { repeated ResourceProfiles resource_profiles = 1; Dictionary dictionary = 2; }
message Response { PartialSuccess partial_success = 1; }
message PartialSuccess { int64 rejected_profiles = 1; string error_message = 2; }

message Dictionary {
  repeated Mapping mapping_table = 1;
  repeated Location location_table = 2;
  repeated Function function_table = 3;
  repeated Link link_table = 4;
  repeated string string_table = 5;
  repeated KeyValueAndUnit attribute_table = 6;
  repeated Stack stack_table = 7;
}
message ResourceProfiles { Resource resource = 1; repeated ScopeProfiles scope_profiles = 2; string schema_url = 3; }
message ScopeProfiles { InstrumentationScope scope = 1; repeated Profile profiles = 2; string schema_url = 3; }
message Profile {
  ValueType sample_type = 1;
  repeated Sample samples = 2;
  fixed64 time_unix_nano = 3;
  uint64 duration_nano = 4;
  ValueType period_type = 5;
  int64 period = 6;
  bytes profile_id = 7;
  uint32 dropped_attributes_count = 8;
  string original_payload_format = 9;
  bytes original_payload = 10;
  repeated int32 attribute_indices = 11;
}
message Sample {
  int32 stack_index = 1;
  repeated int32 attribute_indices = 2;
  int32 link_index = 3;
  repeated int64 values = 4;
  repeated fixed64 timestamps_unix_nano = 5;
}
message Stack { repeated int32 location_indices = 1; }
message Location { int32 mapping_index = 1; uint64 address = 2; repeated Line lines = 3; repeated int32 attribute_indices = 4; }
message Line { int32 function_index = 1; int64 line = 2; int64 column = 3; }
message Function { int32 name_strindex = 1; int32 system_name_strindex = 2; int32 filename_strindex = 3; int64 start_line = 4; }
message Mapping { uint64 memory_start = 1; uint64 memory_limit = 2; uint64 file_offset = 3; int32 filename_strindex = 4; repeated int32 attribute_indices = 5; }
message Link { bytes trace_id = 1; bytes span_id = 2; }
message ValueType { int32 type_strindex = 1; int32 unit_strindex = 2; }
message KeyValueAndUnit { int32 key_strindex = 1; AnyValue value = 2; int32 unit_strindex = 3; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;
const RequestType = root.lookupType('sf.test.Request');
const ResponseType = root.lookupType('sf.test.Response');

export interface DAnyValue {
  /** Which member of the oneof is set. */
  value?: 'string_value' | 'bool_value' | 'int_value' | 'double_value' | 'bytes_value';
  string_value?: string;
  bool_value?: boolean;
  int_value?: string;
  double_value?: number;
  bytes_value?: Buffer;
}
export interface DKeyValue {
  key: string;
  value?: DAnyValue;
}
export interface DSample {
  stack_index: number;
  attribute_indices: number[];
  link_index: number;
  values: string[];
  timestamps_unix_nano: string[];
}
export interface DProfile {
  sample_type?: { type_strindex: number; unit_strindex: number };
  samples: DSample[];
  time_unix_nano: string;
  duration_nano: string;
  period_type?: { type_strindex: number; unit_strindex: number };
  period: string;
  profile_id: Buffer;
  attribute_indices: number[];
}
export interface DDictionary {
  mapping_table: { filename_strindex: number }[];
  location_table: { mapping_index: number; address: string; lines: { function_index: number; line: string; column: string }[]; attribute_indices: number[] }[];
  function_table: { name_strindex: number; system_name_strindex: number; filename_strindex: number; start_line: string }[];
  link_table: { trace_id: Buffer; span_id: Buffer }[];
  string_table: string[];
  attribute_table: { key_strindex: number; value?: DAnyValue; unit_strindex: number }[];
  stack_table: { location_indices: number[] }[];
}
export interface DRequest {
  resource_profiles: {
    resource?: { attributes: DKeyValue[] };
    scope_profiles: { scope?: { name: string; version: string }; profiles: DProfile[] }[];
  }[];
  dictionary: DDictionary;
}

export function decodeRequest(bytes: Uint8Array): DRequest {
  const msg = RequestType.decode(bytes);
  return RequestType.toObject(msg, { longs: String, bytes: Buffer, defaults: true, arrays: true, oneofs: true }) as DRequest;
}

export function encodeResponse(obj: { partial_success?: { rejected_profiles?: number; error_message?: string } }): Uint8Array {
  return ResponseType.encode(ResponseType.fromObject(obj)).finish();
}

export function anyValueText(v: DAnyValue | undefined): string {
  if (v?.value === undefined) return '';
  return String(v[v.value]);
}
