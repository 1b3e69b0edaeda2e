"""Small files in the official formats of every data source, written by the tests.

Each writer returns the path(s) it wrote. Formats follow MANIFEST.md and the sources' own
documentation (UCI adult.names, PrivBayes .dat/.domain, Socrata CSV, WISDM raw_about.txt,
IPUMS DDI-Codebook 2.5, Duarte & Hu's SensIT feature files).
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import tarfile
import threading
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

ADULT_TRAIN = (
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, "
    "Male, 2174, 0, 40, United-States, <=50K\n"
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, "
    "White, Male, 0, 0, 13, United-States, <=50K\n"
    "54, ?, 180211, Some-college, 10, Married-civ-spouse, ?, Husband, Asian-Pac-Islander, Male, "
    "0, 0, 60, South, >50K\n"
    "\n"
)
ADULT_TEST = (
    "|1x3 Cross validator\n"
    "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, "
    "0, 40, United-States, <=50K.\n"
    "38, Private, 89814, HS-grad, 9, Married-civ-spouse, Farming-fishing, Husband, White, Male, "
    "0, 0, 50, United-States, >50K.\n"
    "\n"
)


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write(path: Path, text: str | bytes, newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text if isinstance(text, bytes) else text.replace("\n", newline).encode()
    path.write_bytes(data)
    return path


def gzip_copy(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
    return dest


def adult(d: Path, train: str = ADULT_TRAIN, test: str = ADULT_TEST) -> dict[str, Path]:
    return {"adult.data": write(d / "adult.data", train), "adult.test": write(d / "adult.test", test)}


def nltcs(d: Path, rows=((0,) * 16, (1,) * 16, (0, 1) * 8), declared: int | None = None):
    body = "\n".join("\t".join(map(str, r)) for r in rows)
    dat = write(d / "nltcs.dat", f"{declared if declared is not None else len(rows)}\n{body}\n")
    dom = write(d / "nltcs.domain", "16\n" + "D 0 1\n" * 16)
    return {"nltcs.dat": dat, "nltcs.domain": dom}


def baltimore_fy2017(d: Path) -> Path:
    """FY2017 spelling: upper-case header, '$' money values."""
    return write(
        d / "Baltimore_City_Employee_Salaries_FY2017.csv",
        "NAME,JOBTITLE,DEPTID,DESCR,HIRE_DT,ANNUAL_RT,Gross\n"
        '"Aaron,Patricia G",Facilities/Office Services II,A03031,OED-Employment Dev '
        "(031),10/24/1979 12:00:00 AM,$57863.00,$54992.37\n"
        '"Doe,J",AIDE,W02200,Youth Summer (200),06/10/2013 12:00:00 AM,$0.00,$873.63\n'
        '"Roe,K",CLERK,A01001,Mayors Office (001),01/02/2003 12:00:00 AM,$41000.50,\n',
    )


def baltimore_fy2014(d: Path) -> Path:
    """FY2014 spelling: ' Name' with a leading space, plain numbers."""
    return write(
        d / "Baltimore_City_Employee_Salaries_FY2014.csv",
        " Name,JobTitle,AgencyID,Agency,HireDate,AnnualSalary,GrossPay\n"
        '"Aaron,Keontae E",AIDE BLUE CHIP,W02200,Youth Summer  ,06/10/2013,11310.00,873.63\n',
    )


def sf_2013(d: Path) -> Path:
    """SF 2013 spelling, CR-only line ends, a 'Not Provided' base pay."""
    return write(
        d / "san-francisco-2013.csv",
        "employee_name,job_title,base_pay,overtime_pay,other_pay,total_benefits,"
        "total_pay,total_pay_benefits,year,notes,jurisdiction_name\n"
        "Gregory P Suhr,Chief of Police,319275.01,0,20007.06,86533.21,339282.07,"
        "425815.28,2013,,San Francisco\n"
        'Joanne M Hayes-White,"Chief, Fire Department",313686.01,0,23236,85431.39,'
        "336922.01,422353.4,2013,,San Francisco\n"
        "X Y,Clerk,Not Provided,0,0,0,0,0,2013,,San Francisco\n",
        newline="\r",
    )


SOCRATA_HEADER = (
    '"fiscal_year","payroll_number","agency_name","last_name","first_name",'
    '"mid_init","agency_start_date","work_location_borough","title_description",'
    '"leave_status_as_of_june_30","base_salary","pay_basis","regular_hours",'
    '"regular_gross_paid","ot_hours","total_ot_paid","total_other_pay"'
)


def socrata_rows(n: int, start: int = 0) -> list[str]:
    out = []
    for i in range(start, start + n):
        basis = "per Hour" if i % 5 == 4 else "per Annum"
        out.append(
            f'"2019","{i}","POLICE DEPARTMENT","DOE","JANE","","2010-01-01T00:00:00.000",'
            f'"MANHATTAN","POLICE OFFICER","ACTIVE","{40000 + i}","{basis}","2080",'
            f'"{40000 + i}","0","0","0"'
        )
    return out


def nyc_sample_A(d: Path) -> Path:
    """The official export formatting (sample A): quoted, '$35,109.00', CRLF."""
    return write(
        d / "A.csv",
        '"Fiscal Year","Payroll Number","Agency Name","Last Name","First Name",'
        '"Mid Init","Agency Start Date","Work Location Borough","Title Description",'
        '"Leave Status as of June 30","Base Salary","Pay Basis","Regular Hours",'
        '"Regular Gross Paid","OT Hours","Total OT Paid","Total Other Pay"\n'
        '2020,464,"COMMUNITY COLLEGE (QUEENSBORO)","REYES","JUANA","E","08/31/2005",'
        '"QUEENS","CUNY CUSTODIAL ASSISTANT","ON LEAVE","$35,109.00","per Annum","792",'
        '"$16,076.09","0","$1,511.90","$280.34"\n'
        '2022,996,"NYC HOUSING AUTHORITY","FINN","KEVIN","P","10/31/2011","QUEENS",'
        '"PLASTERER","ON LEAVE","$386.16","per Day","1,840","$110,567.77","357.5",'
        '"$39,886.88","$1,860.54"\n',
        newline="\r\n",
    )


def wisdm_raw(d: Path, tar: bool = True) -> Path:
    """WISDM raw records, with the malformed lines the real file has."""
    text = (
        "33,Jogging,49105962326000,-0.6946377,12.680544,0.50395286;\n"
        "33,Jogging,49106062271000,5.012288,11.264028,0.95342433;\n"
        "33,Jogging,49106112167000,4.903325,10.882658,-0.08172209;"
        "33,Jogging,49106222305000,-0.61291564,18.496431,3.0237172;\n"  # two on one line
        "11,Walking,1867172313000,4.4,4.4,;\n"  # empty z
        "7,Sitting,0,0.0,\n"  # too few fields
        "21,Standing,123,1.0,9.5,0.2;\n"
        "21,Dancing,124,1.0,9.5,0.2;\n"  # unknown activity
        "\n"
    )
    raw = write(d / "WISDM_ar_v1.1_raw.txt", text)
    if not tar:
        return raw
    out = d / "WISDM_ar_latest.tar.gz"
    with tarfile.open(out, "w:gz") as t:
        t.add(raw, arcname="WISDM_ar_v1.1/WISDM_ar_v1.1_raw.txt")
    return out


IPUMS_VARS = [
    ("YEAR", 1, 4, 0),
    ("SAMPLE", 5, 13, 0),
    ("AGE", 14, 16, 0),
    ("SEX", 17, 17, 0),
    ("INCTOT", 18, 24, 0),
    ("HRSWORK1", 25, 27, 0),
]


def ipums_ddi(d: Path, name: str = "ipumsi_00001", fmt: str = "fixed") -> Path:
    """A DDI-Codebook 2.5 as IPUMS writes it (study description with citation and conditions,
    file description, one <var> per variable with location, labels, txt, concept, varFormat)."""
    vars_xml = []
    for var, s, e, dcml in IPUMS_VARS:
        cats = ""
        if var == "SEX":
            cats = (
                "<catgry><catValu>1</catValu><labl>Male</labl></catgry>"
                "<catgry><catValu>2</catValu><labl>Female</labl></catgry>"
                "<catgry><catValu>9</catValu><labl>Unknown</labl></catgry>"
            )
        vars_xml.append(
            f'<var ID="{var}" name="{var}" dcml="{dcml}" intrvl="discrete" files="F1">'
            f'<location StartPos="{s}" EndPos="{e}" width="{e - s + 1}" '
            f'RecSegNo="1"/><labl>{var.title()}</labl>{cats}'
            f"<txt>{var.title()} of the person.</txt><concept>Person</concept>"
            f'<varFormat type="numeric" schema="other"/></var>'
        )
    data_name = f"{name}.dat" if fmt == "fixed" else f"{name}.csv"
    form = "fixed length fields" if fmt == "fixed" else "comma separated values"
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<codeBook xmlns="ddi:codebook:2_5" version="2.5">'
        "<stdyDscr><citation><titlStmt><titl>IPUMS International extract</titl></titlStmt>"
        '<serStmt><serName abbr="IPUMS-I">IPUMS International</serName>'
        "<serInfo>10.18128/D020.V7.3</serInfo></serStmt></citation>"
        "<stdyInfo><notes>Brazil 2010: br2010a</notes></stdyInfo>"
        "<dataAccs><useStmt><citReq>Minnesota Population Center. IPUMS International."
        "</citReq><conditions>Users must cite IPUMS.</conditions></useStmt></dataAccs>"
        "</stdyDscr>"
        f'<fileDscr ID="F1"><fileTxt><fileName>{data_name}</fileName>'
        '<fileCont>Person records</fileCont><fileStrc type="rectangular"/>'
        f'<fileType charset="ISO-8859-1">ascii</fileType><format>{form}</format>'
        "<filePlac>Minnesota Population Center</filePlac></fileTxt></fileDscr>"
        f"<dataDscr>{''.join(vars_xml)}</dataDscr></codeBook>\n"
    )
    return write(d / f"{name}.xml", xml)


IPUMS_RECORDS = [  # YEAR SAMPLE AGE SEX INCTOT HRSWORK1
    (2010, 76201001, 34, 1, 12000, 40),
    (2010, 76201001, 61, 2, 9999999, 999),  # NIU income -> dropped
    (2010, 76201001, 8, 2, 0, 998),
    (2010, 76201001, 45, 9, 55000, 44),  # unknown sex -> dropped
]


def ipums_fixed_width(d: Path, records=IPUMS_RECORDS, gz: bool = True) -> Path:
    lines = "".join(f"{y:04d}{s:09d}{a:03d}{x:01d}{i:07d}{h:03d}\n" for y, s, a, x, i, h in records)
    path = d / ("ipumsi_00001.dat.gz" if gz else "ipumsi_00001.dat")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(lines.encode(), mtime=0) if gz else lines.encode())
    return path


def ipums_csv(d: Path, records=IPUMS_RECORDS) -> Path:
    body = "".join(f"{y},{s},{a},{x},{i},{h}\n" for y, s, a, x, i, h in records)
    return write(d / "ipumsi_00002.csv", "YEAR,SAMPLE,AGE,SEX,INCTOT,HRSWORK1\n" + body)


def vehicle_tar(d: Path, nodes=(1, 2), runs=("aav3", "dw2", "dw3"), rows: int = 3, bad_onehot: bool = False) -> Path:
    """The SensIT layout: <run>/{acoustic_1,seismic_2}/features/<run>evfeat<node>_1_<m>.txt,
    plus the duplicate per-node directories (which must be ignored)."""
    out = d / "vehicle.tar.xz"
    d.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:xz") as t:
        for run in runs:
            kind = "aav" if run.startswith("aav") else "dw"
            for node in nodes:
                for m, moddir, onehot in (
                    (1, "acoustic_1", [1, 0, 0, 0] if kind == "aav" else [0, 1, 0, 0]),
                    (2, "seismic_2", [1, 0, 0] if kind == "aav" else [0, 1, 0]),
                ):
                    lines = []
                    for r in range(rows):
                        feats = [f"{(node * 100 + r + j / 100):.6e}" for j in range(50)]
                        oh = list(onehot)
                        if bad_onehot and run == runs[-1] and r == rows - 1:
                            oh = oh[::-1]
                        lines.append("  ".join(feats + [str(x) for x in oh]))
                    data = ("\n".join(lines) + "\n").encode()
                    name = f"{run}evfeat{node}_1_{m}.txt"
                    for arc in (
                        f"data/vehicle_sensor/{run}/{moddir}/features/{name}",
                        f"data/vehicle_sensor/{run}/n{node}/{name}",
                    ):
                        info = tarfile.TarInfo(arc)
                        info.size = len(data)
                        t.addfile(info, io.BytesIO(data))
    return out


# ------------------------------------------------------------------------- a local web server


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict = {}

    def do_GET(self):  # noqa: N802
        parsed = urllib.parse.urlparse(self.path)
        fn = self.routes.get(parsed.path)
        if fn is None:
            self.send_response(404)
            self.end_headers()
            return
        status, body = fn(urllib.parse.parse_qs(parsed.query))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # silence
        pass


@contextmanager
def web_server(routes: dict, handler=_Handler):
    """Serve ``{path: fn(query) -> (status, bytes)}`` on 127.0.0.1; yields the base URL.
    ``handler``: a subclass of :class:`_Handler` for other methods (e.g. a POST API)."""
    handler = type("H", (handler,), {"routes": routes})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
